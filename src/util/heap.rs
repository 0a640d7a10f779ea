//! How the C allocator keeps memory. glibc gives each thread that allocates
//! its own arena (up to 8 per core) and returns freed memory to the kernel
//! only above a threshold that grows with the largest block freed. schedtop
//! drains on one thread and draws on another, and each drain frees
//! megabytes of per-thread records at once: with the defaults the resident
//! set stays far above what is in use (10,000 thread exits a second: a
//! 126 MB heap peak held 230 MB resident). Two arenas and a fixed 1 MiB trim
//! threshold keep it near what is used (150 MB there).
pub fn keep_resident_near_use() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before any
    // thread is started.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
}
