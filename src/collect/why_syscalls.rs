//! What a blocking system call waits for: the table the switch probe reads
//! (`syscall_reason`, rodata) to name what a thread blocks on. Syscall
//! numbers are per architecture; the probe reads x86-64's saved registers,
//! so other architectures get an empty table (everything "other").
use crate::model::why::BlockReason;

/// The probe's code for the read/write family: the fd's type decides
/// (pipe, socket, file) — BLK_BY_FD in bpf/schedtop.h.
const BY_FD: u8 = 15;

/// x86-64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl).
#[cfg(target_arch = "x86_64")]
const TABLE: &[(BlockReason, &[u16])] = &[
    // futex, futex_waitv, flock, fcntl (F_SETLKW is the one that blocks)
    (BlockReason::Futex, &[202, 449, 73, 72]),
    // nanosleep, clock_nanosleep, pause, rt_sigsuspend
    (BlockReason::Sleep, &[35, 230, 34, 130]),
    // poll, select, pselect6, ppoll, epoll_wait, epoll_pwait, epoll_pwait2
    (BlockReason::Poll, &[7, 23, 270, 271, 232, 281, 441]),
    // wait4, waitid
    (BlockReason::Child, &[61, 247]),
    // connect, accept, sendto, recvfrom, sendmsg, recvmsg, accept4, recvmmsg, sendmmsg
    (
        BlockReason::Socket,
        &[42, 43, 44, 45, 46, 47, 288, 299, 307],
    ),
    // msync, fsync, fdatasync, sync, io_getevents, sync_file_range, syncfs, io_pgetevents
    (BlockReason::DiskIo, &[26, 74, 75, 162, 208, 277, 306, 333]),
];

/// read, write, pread64, pwrite64, readv, writev, sendfile, splice, tee,
/// preadv, pwritev, preadv2, pwritev2
#[cfg(target_arch = "x86_64")]
const BY_FD_CALLS: &[u16] = &[0, 1, 17, 18, 19, 20, 40, 275, 276, 295, 296, 327, 328];

#[cfg(not(target_arch = "x86_64"))]
const TABLE: &[(BlockReason, &[u16])] = &[];
#[cfg(not(target_arch = "x86_64"))]
const BY_FD_CALLS: &[u16] = &[];

/// Fill the probe's table: reason index + 1, 0 for other.
pub fn fill(table: &mut [u8]) {
    table.fill(0);
    for (reason, calls) in TABLE {
        for &nr in *calls {
            if let Some(slot) = table.get_mut(usize::from(nr)) {
                *slot = *reason as u8 + 1;
            }
        }
    }
    for &nr in BY_FD_CALLS {
        if let Some(slot) = table.get_mut(usize::from(nr)) {
            *slot = BY_FD;
        }
    }
}
