//! What a run writes: the ParaView frame series, the final-state JSON (with the obstacles it
//! met), the run's trace for its summary plot, and the sweep of what killed runs left behind.

pub mod final_state;
pub mod frames;
pub mod obstacles;
pub mod run_trace;
pub mod stale_frames;
pub mod stale_staging;
