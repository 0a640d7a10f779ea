//! Reading the BPF program's maps and iterators: plain-old-data records,
//! whole hash maps, streams of thread records.
use std::io::Read;
use std::os::fd::AsRawFd;

use anyhow::{Context, Result};
use libbpf_rs::{Link, MapCore};

use super::bpf_skel::types::thread_stats;

/// Copy a plain-old-data struct out of map bytes.
pub(super) fn read_pod<T: Copy + Default>(bytes: &[u8]) -> T {
    let mut v = T::default();
    let n = std::mem::size_of::<T>().min(bytes.len());
    // SAFETY: T is a repr(C) POD type generated from the BPF program's BTF;
    // we copy at most size_of::<T>() bytes into it.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), &mut v as *mut T as *mut u8, n) };
    v
}

/// Every entry of a hash map, in batches of 1,024 per syscall.
///
/// Not libbpf-rs's batch iterator: it takes a short batch for the last one,
/// but a hash map's batch is also short when the next bucket does not fit
/// (kernel/bpf/hashtab.c), so it stopped early and left entries behind.
/// Here only ENOENT ends the walk.
pub(super) fn read_hash_map<M: MapCore>(map: &M) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    walk_hash_map(map, false)
}

/// `read_hash_map`, deleting what it read in the same syscalls (one per
/// 1,024 entries instead of one per entry).
pub(super) fn take_hash_map<M: MapCore>(map: &M) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    walk_hash_map(map, true)
}

fn walk_hash_map<M: MapCore>(map: &M, delete: bool) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    const BATCH: usize = 1024;
    let (ks, vs) = (map.key_size() as usize, map.value_size() as usize);
    let fd = map.as_fd().as_raw_fd();
    let opts = libbpf_sys::bpf_map_batch_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_map_batch_opts>() as _,
        ..Default::default()
    };
    let mut keys = vec![0u8; ks * BATCH];
    let mut values = vec![0u8; vs * BATCH];
    // the kernel's position in the map (for hash maps: a bucket index)
    let (mut in_batch, mut out_batch) = (0u64, 0u64);
    let mut first = true;
    let mut out = Vec::new();
    loop {
        let mut count = BATCH as u32;
        // SAFETY: the buffers hold BATCH keys and values of the map's sizes;
        // in/out batch are u64, larger than the 4-byte hash batch token.
        let walk = if delete {
            libbpf_sys::bpf_map_lookup_and_delete_batch
        } else {
            libbpf_sys::bpf_map_lookup_batch
        };
        let ret = unsafe {
            walk(
                fd,
                if first {
                    std::ptr::null_mut()
                } else {
                    (&mut in_batch as *mut u64).cast()
                },
                (&mut out_batch as *mut u64).cast(),
                keys.as_mut_ptr().cast(),
                values.as_mut_ptr().cast(),
                &mut count,
                &opts,
            )
        };
        let err = if ret < 0 { -ret } else { 0 };
        if err == libc::EINTR {
            continue;
        }
        if err != 0 && err != libc::ENOENT {
            return Err(std::io::Error::from_raw_os_error(err)).context("reading a BPF map");
        }
        let n = (count as usize).min(BATCH);
        for i in 0..n {
            out.push((
                keys[i * ks..(i + 1) * ks].to_vec(),
                values[i * vs..(i + 1) * vs].to_vec(),
            ));
        }
        if err == libc::ENOENT {
            return Ok(out);
        }
        in_batch = out_batch;
        first = false;
    }
}

/// Bytes read from an iterator at a time.
const ITER_CHUNK: usize = 64 << 10;

/// One pass of an iterator of thread records (the task iterator, or the
/// dirty-set reader), each record handed to `f` as it is
/// read: 64 KiB at a time, never a buffer for every thread (50,000
/// records are 76 MB), read straight into aligned records (no copy).
pub(super) fn each_thread_record(link: &Link, mut f: impl FnMut(&thread_stats)) -> Result<()> {
    let mut it = libbpf_rs::Iter::new(link).context("starting the task iterator")?;
    let size = std::mem::size_of::<thread_stats>();
    let mut recs = vec![thread_stats::default(); ITER_CHUNK / size + 1];
    // bytes at the front that hold a record cut by a read
    let mut held = 0;
    // SAFETY (both views): thread_stats is a repr(C) struct of integers
    // generated from the BPF program's BTF, so every byte pattern is a valid
    // value, and the slice covers exactly the vector's initialised records.
    let as_bytes = |recs: &mut Vec<thread_stats>| unsafe {
        std::slice::from_raw_parts_mut(recs.as_mut_ptr() as *mut u8, recs.len() * size)
    };
    loop {
        let n = match it.read(&mut as_bytes(&mut recs)[held..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("reading the task iterator"),
        };
        let end = held + n;
        let whole = end / size;
        for r in &recs[..whole] {
            f(r);
        }
        // a record cut by the read: its bytes to the front, the rest follows
        as_bytes(&mut recs).copy_within(whole * size..end, 0);
        held = end - whole * size;
    }
    Ok(())
}
