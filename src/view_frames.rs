//! The frames a `--view` run of `control` or `optimize` writes into `--out` (staged while it
//! runs, moved into place once it has succeeded) and the closing of that run folder: where
//! its files are, `final.json` and the viewer page. Part of the `diffsoro` binary.

use std::path::Path;

use diffsoro::scene::{ContactOutcome, FinalState, FrameSeries, Scene, State};

use crate::write_run_view;

/// The frames of a run as driven, when `--view` asks for them with an `--out` folder.
pub(crate) struct ViewFrames {
    series: Option<FrameSeries>,
    /// The state of the last frame written.
    last: Option<FinalState>,
}

impl ViewFrames {
    /// Frames staged in `out` for the bodies of `scene` when `view` is set and `out` given;
    /// none otherwise ([`ViewFrames::record`] then does nothing).
    pub(crate) fn new(view: bool, out: Option<&Path>, scene: &Scene) -> diffsoro::Result<Self> {
        let series = match (view, out) {
            (true, Some(dir)) => Some(FrameSeries::create(dir, scene)?),
            _ => None,
        };
        Ok(ViewFrames { series, last: None })
    }

    /// Writes the frame of `state` of `driven` (the scene as driven at that step) with the
    /// step's `contacts` (empty for the initial state, which has no step, hence no contact
    /// forces), and keeps it as the final state.
    pub(crate) fn record(
        &mut self,
        driven: &Scene,
        state: &State,
        contacts: &[ContactOutcome],
    ) -> diffsoro::Result<()> {
        if let Some(f) = self.series.as_mut() {
            let contacts = Some(contacts).filter(|c| !c.is_empty());
            f.write_with_contacts(driven, state, contacts)?;
            self.last = Some(FinalState::new(driven, state));
        }
        Ok(())
    }

    /// Closes the run folder `dir` once the report has written its `written` files there:
    /// says where they are on stderr and, with frames, moves them into place with
    /// `final.json` (the last frame's state) and writes the viewer page.
    pub(crate) fn finish(self, dir: &Path, scene: &Scene, written: usize) -> diffsoro::Result<()> {
        eprintln!(
            "wrote {written} files in {}; {} shows the run on one page",
            dir.display(),
            dir.join("summary.svg").display()
        );
        if let (Some(f), Some(last)) = (self.series, self.last) {
            let json = serde_json::to_vec(&last)
                .map_err(|e| diffsoro::Error::invalid("final state", e.to_string()))?;
            f.finish(scene, &json)?;
            write_run_view(dir)?;
        }
        Ok(())
    }
}
