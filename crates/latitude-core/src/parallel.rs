//! The core's data parallelism: rayon, with one knob.
//!
//! `LATITUDE_THREADS` (a positive whole number, read once at first use) sets how many threads
//! the data-parallel loops use: engine passes over many parameter points, the parts of an exact
//! sweep, Monte Carlo samples, and the sorting and re-ordering of large graphs. Without it,
//! the number of cores this process may run on. The loops run on one pool of that size, ours
//! rather than rayon's global one (which reads RAYON_NUM_THREADS and may be set up by another
//! library in the same process). The trace reader and the generator's sink keep a dedicated
//! thread each: they are pipelines overlapping I/O and work, not loops over data.

use std::sync::OnceLock;

use rayon::{ThreadPool, ThreadPoolBuilder};

/// The environment variable of the thread count.
pub const THREADS_ENV: &str = "LATITUDE_THREADS";

/// `LATITUDE_THREADS` when it is a positive whole number (None when unset; Err with the text
/// otherwise), so that front ends can report a bad value.
pub fn threads_from_env() -> Result<Option<usize>, String> {
    match std::env::var(THREADS_ENV) {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(v),
        },
    }
}

/// Threads of the data-parallel loops: `LATITUDE_THREADS`, else the available cores (a bad
/// value counts as unset; the CLI refuses it before any work).
pub fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| threads_from_env().ok().flatten().unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())))
}

fn pool() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| new_pool(threads()))
}

fn new_pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("latitude-{i}")).build().expect("a thread pool")
}

/// Run `f` on the core's pool: rayon calls inside it use [`threads`] threads.
pub fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    pool().install(f)
}

/// Run `f` with exactly `n` threads (an explicit count, as `latitude simulate --threads`):
/// the core's pool when it has that size, else a pool made for the call.
pub fn run_with<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
    let n = n.max(1);
    if n == threads() {
        run(f)
    } else {
        new_pool(n).install(f)
    }
}

/// `a` and `b` at the same time when `parallel` (on the core's pool), one after the other
/// otherwise (small inputs, where a second thread costs more than it saves).
pub fn join<A: Send, B: Send>(parallel: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    if parallel {
        run(|| rayon::join(a, b))
    } else {
        (a(), b())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn pools_have_the_requested_size() {
        assert!(threads() >= 1);
        assert_eq!(run(rayon::current_num_threads), threads());
        assert_eq!(run_with(3, rayon::current_num_threads), 3);
        assert_eq!(run_with(0, rayon::current_num_threads), 1);
        let sum: u64 = run(|| (0..1000u64).into_par_iter().sum());
        assert_eq!(sum, 499_500);
        assert_eq!(join(true, || 1, || 2), (1, 2));
        assert_eq!(join(false, || 1, || 2), (1, 2));
    }
}
