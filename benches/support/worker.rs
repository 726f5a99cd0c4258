//! Runs a bench group on a worker of a rayon pool (of the default size: `RAYON_NUM_THREADS`
//! or the cores), as `diffsoro` runs its commands: a step's parallel loops then start on the
//! step's own thread instead of being handed from criterion's main thread to the pool and
//! waited for (a wake-up and a sleep per loop, docs/speed.md).

/// Calls `group` on a worker of a new rayon pool and returns when it has run.
pub fn on_worker(group: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a rayon pool for the benches")
        .install(group)
}
