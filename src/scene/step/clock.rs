//! The one clock the step's stages time themselves with: the wall time (s) between laps of the
//! monotonic clock, a few tens of nanoseconds a lap ([`super::StageTimes`] and
//! [`super::FreeStageTimes`] hold what it measures).

use std::time::Instant;

/// Laps of the monotonic clock.
pub struct StageClock {
    last: Instant,
}

impl StageClock {
    /// A clock whose first lap starts now.
    pub fn start() -> StageClock {
        StageClock {
            last: Instant::now(),
        }
    }

    /// The wall time since the last lap (or the start), in s; starts the next lap.
    pub fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let dt = (now - self.last).as_secs_f64();
        self.last = now;
        dt
    }
}

/// `f()` and its wall time (s), for a part that runs on a thread of its own.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}
