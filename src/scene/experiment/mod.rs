//! What an experiment brings to a run, beside the scene: logged actuator commands over time
//! (`--inputs FILE.csv`, docs/cli.md#commands-over-time), read with file and line errors
//! (`command_log`), scheduled over the steps with each actuator's gain, offset, lag and
//! bounds (`command_schedule`), and the run that follows them from a static or scene start
//! (`command_run`); marker track files (`time,marker,x,y,z`, docs/outputs.md), read for
//! observed tracks and written for simulated ones (`tracks`); paths of points over time
//! (`time,x,y,z`: waypoints, moving targets; `point_path`). The three files share their CSV
//! reading (`csv_table`) and their interpolation in time (`interpolate`: a simulated track
//! at an observed sample's time, a log's or a path's values held outside their samples).
//! The last folder of `scene`: it uses the model, the step, statics and the outputs.

pub mod command_log;
pub mod command_run;
pub mod command_schedule;
mod csv_table;
pub mod interpolate;
pub mod point_path;
pub mod tracks;

#[cfg(test)]
mod tests;
