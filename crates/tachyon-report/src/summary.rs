//! The timing summary of a report: per split the worst and total negative slack and the
//! failing endpoints, the worst endpoints, and every endpoint's slack for the
//! histogram. With TAU 2015 assertions from the engines' timing ([`Summary::new`]);
//! under SDC constraints from the SDC search, as OpenSTA counts ([`Summary::from_sta`]).

use tachyon_graph::{PinId, TimingData, TimingGraph};
use tachyon_kernels::{Split, Transition};
use tachyon_sta::StaTiming;

use crate::detail::opensta_pin_name;

/// What the total negative slack sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TnsConvention {
    /// Every endpoint transition's negative slack (`report_tns` with TAU 2015
    /// assertions).
    EndpointTransitions,
    /// Each endpoint's worst negative slack, once (OpenSTA's `report_tns`).
    Endpoints,
}

/// The summary of one split.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitSummary {
    /// Late (setup) or early (hold).
    pub split: Split,
    /// The worst endpoint slack if negative, else 0.
    pub wns: f64,
    /// The total negative slack, as [`Summary::tns`] says.
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
    /// Endpoints (primary outputs and test data pins; under SDC OpenSTA's).
    pub endpoints: usize,
    /// What the TNS sums.
    pub tns_convention: TnsConvention,
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
            tally(
                split,
                endpoints,
                |pin, transition| data.slack_at(pin, split, transition),
                |pin| graph.pin(pin).name.clone(),
                &mut worst,
            )
        });
        Summary::with_worst(
            graph,
            endpoints.len(),
            TnsConvention::EndpointTransitions,
            splits,
            worst,
            n_worst,
        )
    }

    /// The summary of the SDC search's results, as OpenSTA counts: its endpoints, WNS
    /// the worst endpoint slack if negative, TNS each endpoint's worst negative slack
    /// once (the search's own sums); the `n_worst` worst endpoints named as OpenSTA
    /// names them.
    pub fn from_sta(graph: &TimingGraph, timing: &StaTiming, n_worst: usize) -> Summary {
        let mut worst: Vec<EndpointSlack> = Vec::new();
        let splits = [Split::Late, Split::Early].map(|split| {
            let mut summary = tally(
                split,
                timing.endpoints(),
                |pin, transition| timing.slack(pin, split, transition),
                |pin| opensta_pin_name(&graph.pin(pin).name).into_owned(),
                &mut worst,
            );
            summary.wns = timing.worst_negative_slack(split);
            summary.tns = timing.total_negative_slack(split);
            summary
        });
        Summary::with_worst(
            graph,
            timing.endpoints().len(),
            TnsConvention::Endpoints,
            splits,
            worst,
            n_worst,
        )
    }

    fn with_worst(
        graph: &TimingGraph,
        endpoints: usize,
        tns_convention: TnsConvention,
        splits: [SplitSummary; 2],
        mut worst: Vec<EndpointSlack>,
        n_worst: usize,
    ) -> Summary {
        worst.sort_by(|a, b| {
            a.slack
                .total_cmp(&b.slack)
                .then_with(|| a.name.cmp(&b.name))
        });
        worst.truncate(n_worst);
        Summary {
            pins: graph.n_pins(),
            endpoints,
            tns_convention,
            splits,
            worst,
        }
    }
}

/// One split over `endpoints`: the constrained and failing endpoints and their worst
/// slacks (into `worst` too, named by `name_of`), WNS, and TNS summed over endpoint
/// transitions.
fn tally(
    split: Split,
    endpoints: &[PinId],
    slack_of: impl Fn(PinId, Transition) -> Option<f64>,
    name_of: impl Fn(PinId) -> String,
    worst: &mut Vec<EndpointSlack>,
) -> SplitSummary {
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
            let Some(slack) = slack_of(pin, transition) else {
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
            name: name_of(pin),
            split,
            transition,
            slack,
        });
    }
    summary
}
