//! The shares of the element loop's slabs ([`super::node_slabs`]) that let its threads finish
//! together. The threads of a parallel loop do not start together: the calling thread wakes
//! the others (a system call) before it starts on its own part, and a woken thread starts
//! tens of microseconds later, which on a 2,000-element mesh is a tenth of the loop. With equal
//! shares the calling thread finishes first and waits; when it has gone to sleep meanwhile,
//! the loop ends only once the last thread is done and has woken it again. Giving the
//! calling thread the larger share lets the loop end as soon as that thread is done
//! (docs/speed.md has the figures).
//!
//! The balance is measured, not assumed: each part's start and busy time are averaged over a
//! window of evaluations, and a part `p` that started at `sₚ` and evaluated `cₚ` elements in
//! `bₚ` seconds is modelled as finishing at `sₚ + xₚ rₚ` with a share `xₚ` of the `N`
//! elements evaluated, `rₚ = bₚ N / cₚ`. The calling thread's part is to finish last, by a
//! margin `m` of the others' finishing time `T` (so that it never sleeps on the others), and
//! the others together:
//!
//! ```text
//! xₚ = (kₚ T − sₚ) / rₚ,   kₚ = 1 + m for the calling thread's part, 1 for the others,
//! T = (1 + Σₚ sₚ / rₚ) / Σₚ kₚ / rₚ
//! ```
//!
//! The shares change when the model's finishing time beats the measured end of the loop by a
//! few percent. Where a part's share changes, elements move between the parts; which part
//! evaluates an element changes no result (`crate::linalg::PartedAssembly` sums every value in
//! clique order whatever the parts), so the bits do not depend on the timings.

/// Evaluations left out after the shares are set (the first ones start cold: caches, the
/// parts' new buffers).
const WARM_UP: usize = 2;

/// Evaluations per window of measurement.
const WINDOW: usize = 8;

/// Re-splits at most, over the life of one set of parts: on a noisy machine the measured
/// balance wanders, and every re-split builds the parts' assembly again.
const MAX_RESPLITS: usize = 6;

/// The gain in the loop's end below which the shares are kept (a fraction of it).
const MIN_GAIN: f64 = 0.03;

/// Evaluations within which a re-split is to pay for building the parts again (by the model's
/// gain per evaluation): a build costs several evaluations' worth.
const PAYBACK_EVALUATIONS: f64 = 50.0;

/// How much later than the others the calling thread's part is to finish (a fraction of
/// their finishing time).
const CALLER_MARGIN: f64 = 0.05;

/// The least share a part is given, as a fraction of an equal share (so that the floors of
/// all the parts never add up to more than the whole, on any thread count).
const MIN_SHARE_OF_EQUAL: f64 = 0.1;

/// One part's timing in one evaluation of the element loop.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct PartTiming {
    /// From the loop's start to the part's first element (s).
    pub start: f64,
    /// From the part's first element to its last one done (s).
    pub busy: f64,
    /// Elements the part evaluated (its slab's, and those across its boundaries).
    pub elements: usize,
    /// Whether the thread that ran the loop ran this part.
    pub caller: bool,
}

/// One part's timings summed over a window of evaluations.
#[derive(Debug, Clone, Copy, Default)]
struct WindowSum {
    start: f64,
    busy: f64,
    elements: usize,
    /// Evaluations in which the calling thread ran the part.
    by_caller: usize,
}

/// The shares of the parts and the timings measured with them.
#[derive(Debug, Clone)]
pub(super) struct SlabBalance {
    shares: Vec<f64>,
    /// Evaluations seen since the shares were last set.
    seen: usize,
    /// Sums over the current window: per part, and of the loop's ends (s).
    sums: Vec<WindowSum>,
    ends: f64,
    resplits: usize,
    /// How long the parts took to build with the current shares (s).
    build: f64,
}

impl SlabBalance {
    /// Equal shares of `parts` parts.
    pub(super) fn new(parts: usize) -> SlabBalance {
        SlabBalance::with_shares(vec![1.0 / parts as f64; parts])
    }

    /// The shares `shares` (fractions of the elements, summing to 1), one per part.
    pub(super) fn with_shares(shares: Vec<f64>) -> SlabBalance {
        let parts = shares.len();
        SlabBalance {
            shares,
            seen: 0,
            sums: vec![WindowSum::default(); parts],
            ends: 0.0,
            resplits: 0,
            build: 0.0,
        }
    }

    /// Takes in how long building the parts with the current shares took (s): what a
    /// re-split is to gain back.
    pub(super) fn set_build_time(&mut self, seconds: f64) {
        self.build = seconds;
    }

    /// The current shares (fractions of the elements, summing to 1).
    pub(super) fn shares(&self) -> &[f64] {
        &self.shares
    }

    /// Takes in one evaluation's timings, one per part, and the loop's end (s from its
    /// start); sets new shares and returns true when a window of them says the loop would
    /// end sooner with those, by more than [`MIN_GAIN`] and by enough to gain back the parts'
    /// build within [`PAYBACK_EVALUATIONS`], and then measures afresh with them.
    ///
    /// Panics if there is not one timing per part.
    pub(super) fn record(
        &mut self,
        timings: impl ExactSizeIterator<Item = PartTiming>,
        end: f64,
    ) -> bool {
        assert_eq!(
            timings.len(),
            self.shares.len(),
            "record: one timing per part"
        );
        if self.resplits >= MAX_RESPLITS {
            return false;
        }
        self.seen += 1;
        if self.seen <= WARM_UP {
            return false;
        }
        for (sum, t) in self.sums.iter_mut().zip(timings) {
            sum.start += t.start;
            sum.busy += t.busy;
            sum.elements += t.elements;
            sum.by_caller += usize::from(t.caller);
        }
        self.ends += end;
        if self.seen < WARM_UP + WINDOW {
            return false;
        }
        let means: Vec<PartTiming> = self
            .sums
            .iter()
            .map(|s| PartTiming {
                start: s.start / WINDOW as f64,
                busy: s.busy / WINDOW as f64,
                elements: s.elements / WINDOW,
                // The part the calling thread ran in most of the window.
                caller: 2 * s.by_caller > WINDOW,
            })
            .collect();
        let end = self.ends / WINDOW as f64;
        self.seen = 0;
        self.sums.fill(WindowSum::default());
        self.ends = 0.0;
        let Some((shares, finish)) = balanced_shares(&means) else {
            return false;
        };
        if finish > (1.0 - MIN_GAIN) * end || (end - finish) * PAYBACK_EVALUATIONS < self.build {
            return false;
        }
        self.shares = shares;
        self.resplits += 1;
        true
    }
}

/// The shares that make parts with the mean timings `parts` finish as the module doc says
/// (none below [`MIN_SHARE_OF_EQUAL`] of an equal share), and when the model has the last of
/// them finish (s); `None` when a part evaluated no element or took no time (nothing to
/// model).
fn balanced_shares(parts: &[PartTiming]) -> Option<(Vec<f64>, f64)> {
    let total: usize = parts.iter().map(|t| t.elements).sum();
    if parts.iter().any(|t| t.elements == 0 || !(t.busy > 0.0)) {
        return None;
    }
    // rₚ: the time part p would take for all the elements; kₚ: its finish over T.
    let rates: Vec<f64> = parts
        .iter()
        .map(|t| t.busy * total as f64 / t.elements as f64)
        .collect();
    let later: Vec<f64> = parts
        .iter()
        .map(|t| if t.caller { 1.0 + CALLER_MARGIN } else { 1.0 })
        .collect();
    let floor = MIN_SHARE_OF_EQUAL / parts.len() as f64;
    let mut shares = vec![0.0; parts.len()];
    let mut floored = vec![false; parts.len()];
    // Parts whose share would fall below the floor get the floor; the others share the rest
    // (at most one pass per part).
    for _ in 0..parts.len() {
        let left = 1.0 - floored.iter().filter(|&&f| f).count() as f64 * floor;
        let free = || (0..parts.len()).filter(|&p| !floored[p]);
        let inverse: f64 = free().map(|p| later[p] / rates[p]).sum();
        let weighted: f64 = free().map(|p| parts[p].start / rates[p]).sum();
        let finish = (left + weighted) / inverse;
        let mut changed = false;
        for p in 0..parts.len() {
            shares[p] = if floored[p] {
                floor
            } else {
                (later[p] * finish - parts[p].start) / rates[p]
            };
            if !floored[p] && shares[p] < floor {
                floored[p] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let last = (0..parts.len())
        .map(|p| parts[p].start + shares[p] * rates[p])
        .fold(0.0, f64::max);
    Some((shares, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(start: f64, busy: f64, elements: usize) -> PartTiming {
        PartTiming {
            start,
            busy,
            elements,
            caller: false,
        }
    }

    #[test]
    fn a_part_that_starts_later_gets_fewer_elements() {
        // Two parts of 1,000 elements at 1 µs each; the second starts 40 µs after the first.
        // Finishing together at T: T = x₀ · 2,000 µs = 40 µs + x₁ · 2,000 µs with
        // x₀ + x₁ = 1, so T = 1,020 µs, x₀ = 0.51, x₁ = 0.49.
        let (shares, finish) =
            balanced_shares(&[timing(0.0, 1e-3, 1000), timing(40e-6, 1e-3, 1000)]).unwrap();
        assert!((finish - 1.02e-3).abs() < 1e-15, "{finish}");
        assert!((shares[0] - 0.51).abs() < 1e-12 && (shares[1] - 0.49).abs() < 1e-12);
    }

    #[test]
    fn the_calling_threads_part_finishes_last_by_the_margin() {
        // As above with the first part the caller's: x₀ · 2,000 µs = 1.05 T and
        // 40 µs + x₁ · 2,000 µs = T, so T = 2,040 µs / 2.05 and the loop ends at 1.05 T.
        let mut caller = timing(0.0, 1e-3, 1000);
        caller.caller = true;
        let (shares, finish) = balanced_shares(&[caller, timing(40e-6, 1e-3, 1000)]).unwrap();
        let t = 2.04e-3 / 2.05;
        assert!((finish - 1.05 * t).abs() < 1e-15, "{finish}");
        assert!((shares[0] - 1.05 * t / 2e-3).abs() < 1e-12, "{shares:?}");
        assert!((shares[0] + shares[1] - 1.0).abs() < 1e-15);
    }

    #[test]
    fn a_slower_part_gets_fewer_elements() {
        // Both start at once; the second takes 2 µs an element, the first 1 µs: x₀ = 2 x₁,
        // so 2/3 and 1/3 of the 900 elements, finishing at 600 µs.
        let (shares, finish) =
            balanced_shares(&[timing(0.0, 450e-6, 450), timing(0.0, 900e-6, 450)]).unwrap();
        assert!((shares[0] - 2.0 / 3.0).abs() < 1e-12, "{shares:?}");
        assert!((finish - 600e-6).abs() < 1e-15, "{finish}");
    }

    #[test]
    fn a_part_too_late_for_any_work_keeps_the_least_share() {
        // The third part starts after the other two could have done everything: it keeps
        // the floor, a tenth of a third, the two others split the rest equally, and the loop
        // ends with the third.
        let (shares, finish) = balanced_shares(&[
            timing(0.0, 1e-3, 100),
            timing(0.0, 1e-3, 100),
            timing(1.0, 1e-3, 100),
        ])
        .unwrap();
        let floor = 0.1 / 3.0;
        assert_eq!(shares[2], floor);
        let rest = (1.0 - floor) / 2.0;
        assert!((shares[0] - rest).abs() < 1e-12 && (shares[1] - rest).abs() < 1e-12);
        assert!((finish - (1.0 + floor * 3e-3)).abs() < 1e-12, "{finish}");
        assert!(balanced_shares(&[timing(0.0, 1e-3, 100), timing(0.0, 0.0, 100)]).is_none());
    }

    #[test]
    fn on_many_threads_the_floors_leave_the_whole_to_share() {
        // 40 parts, the last 39 starting after the first could have done everything: each
        // keeps the floor (a tenth of 1/40), the first takes the rest, and the shares add up
        // to one.
        let mut parts = vec![timing(1.0, 1e-3, 100); 40];
        parts[0] = timing(0.0, 1e-3, 100);
        let (shares, _) = balanced_shares(&parts).unwrap();
        assert!(shares[1..].iter().all(|&s| s == 0.1 / 40.0), "{shares:?}");
        assert!((shares[0] - (1.0 - 39.0 * 0.1 / 40.0)).abs() < 1e-12);
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn shares_change_after_a_window_and_only_for_a_real_gain() {
        let late = [timing(0.0, 1e-3, 1000), timing(100e-6, 1e-3, 1000)];
        let mut balance = SlabBalance::new(2);
        for _ in 0..WARM_UP + WINDOW - 1 {
            assert!(!balance.record(late.into_iter(), 1.1e-3));
        }
        // The window's means: T = 1,050 µs against a loop that ended at 1,100 µs.
        assert!(balance.record(late.into_iter(), 1.1e-3));
        let shares = balance.shares().to_vec();
        assert!((shares[0] - 0.525).abs() < 1e-12, "{shares:?}");
        assert_eq!(balance.shares(), shares);
        // Balanced timings (as the new shares give, by the model) change nothing.
        let even = [timing(0.0, 1.05e-3, 1050), timing(100e-6, 0.95e-3, 950)];
        for _ in 0..3 * (WARM_UP + WINDOW) {
            assert!(!balance.record(even.into_iter(), 1.05e-3));
        }
        assert_eq!(balance.shares(), shares);
        // Nor do timings whose loop already ends within MIN_GAIN of the model's, or whose
        // gain of 50 µs an evaluation does not pay back a build of 2.6 ms in
        // PAYBACK_EVALUATIONS.
        let mut fresh = SlabBalance::new(2);
        let mut slow_build = SlabBalance::new(2);
        slow_build.set_build_time(2.6e-3);
        for _ in 0..3 * (WARM_UP + WINDOW) {
            assert!(!fresh.record(late.into_iter(), 1.06e-3));
            assert!(!slow_build.record(late.into_iter(), 1.1e-3));
        }
        assert_eq!(fresh.shares(), [0.5, 0.5]);
        assert_eq!(slow_build.shares(), [0.5, 0.5]);
        slow_build.set_build_time(2.4e-3);
        for _ in 0..WARM_UP + WINDOW - 1 {
            assert!(!slow_build.record(late.into_iter(), 1.1e-3));
        }
        assert!(slow_build.record(late.into_iter(), 1.1e-3));
    }
}
