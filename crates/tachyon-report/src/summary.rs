//! The timing summary of a report: per split the worst and total negative slack and the
//! failing endpoints, the worst endpoints, and every endpoint's slack for the
//! histogram.

use tachyon_graph::{PinId, TimingData, TimingGraph};
use tachyon_kernels::{Split, Transition};

/// The summary of one split.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitSummary {
    /// Late (setup) or early (hold).
    pub split: Split,
    /// The worst endpoint slack if negative, else 0.
    pub wns: f64,
    /// The sum of the negative slacks of endpoint transitions (what `report_tns` and
    /// `Timer::total_negative_slack` give).
    pub tns: f64,
    /// Endpoints with a negative slack (either transition).
    pub failing: usize,
    /// Endpoints with a slack in this split.
    pub constrained: usize,
    /// Each constrained endpoint's worst slack over its transitions, in endpoint
    /// order (the histogram's values).
    pub endpoint_slacks: Vec<f64>,
}

/// One endpoint's worst slack in one split.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointSlack {
    /// The endpoint's name.
    pub name: String,
    /// The split.
    pub split: Split,
    /// The transition with the worst slack.
    pub transition: Transition,
    /// The slack (ps).
    pub slack: f64,
}

/// The summary of a timed design.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Pins of the graph.
    pub pins: u32,
    /// Endpoints (primary outputs and test data pins).
    pub endpoints: usize,
    /// Late first, then early.
    pub splits: [SplitSummary; 2],
    /// The worst endpoints of both splits, worst first (ties by name).
    pub worst: Vec<EndpointSlack>,
}

impl Summary {
    /// The summary of `data` over `endpoints` (each once), with the `n_worst` worst
    /// endpoints listed.
    pub fn new(
        graph: &TimingGraph,
        data: &TimingData,
        endpoints: &[PinId],
        n_worst: usize,
    ) -> Summary {
        let mut worst: Vec<EndpointSlack> = Vec::new();
        let splits = [Split::Late, Split::Early].map(|split| {
            let mut summary = SplitSummary {
                split,
                wns: 0.0,
                tns: 0.0,
                failing: 0,
                constrained: 0,
                endpoint_slacks: Vec::new(),
            };
            for &pin in endpoints {
                let mut pin_worst: Option<(Transition, f64)> = None;
                for transition in Transition::BOTH {
                    let Some(slack) = data.slack_at(pin, split, transition) else {
                        continue;
                    };
                    if slack < 0.0 {
                        summary.tns += slack;
                    }
                    if pin_worst.is_none_or(|(_, current)| slack < current) {
                        pin_worst = Some((transition, slack));
                    }
                }
                let Some((transition, slack)) = pin_worst else {
                    continue;
                };
                summary.constrained += 1;
                summary.endpoint_slacks.push(slack);
                summary.wns = summary.wns.min(slack);
                if slack < 0.0 {
                    summary.failing += 1;
                }
                worst.push(EndpointSlack {
                    name: graph.pin(pin).name.clone(),
                    split,
                    transition,
                    slack,
                });
            }
            summary
        });
        worst.sort_by(|a, b| {
            a.slack
                .total_cmp(&b.slack)
                .then_with(|| a.name.cmp(&b.name))
        });
        worst.truncate(n_worst);
        Summary {
            pins: graph.n_pins(),
            endpoints: endpoints.len(),
            splits,
            worst,
        }
    }
}
