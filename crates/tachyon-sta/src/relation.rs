//! Which capture edge a check uses: the cycle relation between a launching clock edge
//! and a capturing one.
//!
//! A setup check uses the first capture edge after the launch edge (over the launch
//! edges of the clocks' common period, the closest one), a hold check the capture edge
//! one capture period before it. A multicycle path moves the setup edge by `N - 1`
//! periods (of the capture clock, or the launch clock with `-start`) and the hold edge
//! by `M` more.

use crate::constraints::{ClockEdge, Constraints};

/// The most launch periods looked at when two clocks' periods have no small common
/// multiple.
const MAX_LAUNCH_CYCLES: usize = 1000;

/// How long after the launch edge the setup capture edge comes, and the hold capture
/// edge (negative or zero: at or before the launch), before multicycle paths.
pub fn edge_offsets(
    constraints: &Constraints,
    launch: ClockEdge,
    capture: ClockEdge,
) -> (f64, f64) {
    let launch_clock = constraints.clock(launch.clock);
    let capture_clock = constraints.clock(capture.clock);
    let (launch_period, capture_period) = (launch_clock.period, capture_clock.period);
    let launch_time = launch_clock.edge_time(launch.transition);
    let capture_time = capture_clock.edge_time(capture.transition);
    let n_cycles = launch_cycles(launch_period, capture_period);
    let mut setup = f64::INFINITY;
    let mut latest_setup = f64::NEG_INFINITY;
    for cycle in 0..n_cycles {
        let launch_at = launch_time + cycle as f64 * launch_period;
        // The first capture edge strictly after the launch (a tiny tolerance keeps
        // coincident edges from counting as "after").
        let tolerance = 1e-9 * capture_period.max(1.0);
        let mut capture_at =
            capture_time + ((launch_at - capture_time) / capture_period).floor() * capture_period;
        while capture_at <= launch_at + tolerance {
            capture_at += capture_period;
        }
        while capture_at - capture_period > launch_at + tolerance {
            capture_at -= capture_period;
        }
        let offset = capture_at - launch_at;
        setup = setup.min(offset);
        latest_setup = latest_setup.max(offset);
    }
    (setup, latest_setup - capture_period)
}

/// How many launch periods span the clocks' common period (capped).
fn launch_cycles(launch_period: f64, capture_period: f64) -> usize {
    if launch_period == capture_period {
        return 1;
    }
    // Periods as whole femtoseconds: their least common multiple, when small.
    let to_units = |period: f64| (period * 1000.0).round() as u64;
    let (launch_units, capture_units) = (to_units(launch_period), to_units(capture_period));
    if launch_units == 0 || capture_units == 0 {
        return 1;
    }
    let lcm = launch_units / gcd(launch_units, capture_units) * capture_units;
    let cycles = lcm / launch_units;
    usize::try_from(cycles)
        .unwrap_or(MAX_LAUNCH_CYCLES)
        .clamp(1, MAX_LAUNCH_CYCLES)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The setup and hold offsets with multicycle paths: a setup multiplier `setup_cycles`
/// (1 by default; counting launch periods when `setup_start`) and a hold multiplier
/// `hold_cycles` (0 by default; counting launch periods when `hold_start`).
pub fn check_offsets(
    constraints: &Constraints,
    launch: ClockEdge,
    capture: ClockEdge,
    setup_cycles: (u32, bool),
    hold_cycles: (u32, bool),
) -> (f64, f64) {
    let (setup, hold) = edge_offsets(constraints, launch, capture);
    let period = |start: bool| {
        if start {
            constraints.clock(launch.clock).period
        } else {
            constraints.clock(capture.clock).period
        }
    };
    let (setup_multiplier, setup_start) = setup_cycles;
    let setup_shift = f64::from(setup_multiplier.saturating_sub(1)) * period(setup_start);
    let (hold_multiplier, hold_start) = hold_cycles;
    let hold_shift = f64::from(hold_multiplier) * period(hold_start);
    (setup + setup_shift, hold + setup_shift - hold_shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::{Clock, ClockId};
    use tachyon_kernels::Transition;

    fn clock(period: f64, rise: f64, fall: f64) -> Clock {
        Clock {
            name: "c".into(),
            period,
            waveform: [rise, fall],
            sources: Vec::new(),
            propagated: true,
            source_latency: [0.0; 4],
            network_latency: [0.0; 4],
            transition: [0.0; 4],
            uncertainty: [0.0; 2],
        }
    }

    fn edge(clock: u32, transition: Transition) -> ClockEdge {
        ClockEdge {
            clock: ClockId(clock),
            transition,
        }
    }

    #[test]
    fn one_clock_checks_the_next_edge_and_the_same_edge() {
        let constraints = Constraints {
            clocks: vec![clock(10.0, 0.0, 5.0)],
            ..Constraints::default()
        };
        let rise = edge(0, Transition::Rise);
        let fall = edge(0, Transition::Fall);
        assert_eq!(edge_offsets(&constraints, rise, rise), (10.0, 0.0));
        // Rise launch, fall capture: half a period; hold at the fall before.
        assert_eq!(edge_offsets(&constraints, rise, fall), (5.0, -5.0));
        assert_eq!(edge_offsets(&constraints, fall, rise), (5.0, -5.0));
        // A multicycle path of 3 moves setup two periods and hold with it, unless a
        // hold multiplier of 2 brings it back.
        assert_eq!(
            check_offsets(&constraints, rise, rise, (3, false), (0, false)),
            (30.0, 20.0)
        );
        assert_eq!(
            check_offsets(&constraints, rise, rise, (3, false), (2, false)),
            (30.0, 0.0)
        );
    }

    #[test]
    fn related_clocks_use_the_closest_edges_over_the_common_period() {
        let constraints = Constraints {
            clocks: vec![clock(10.0, 0.0, 5.0), clock(4.0, 0.0, 2.0)],
            ..Constraints::default()
        };
        // Launch every 10 (0, 10), capture every 4: 0 -> 4 (4), 10 -> 12 (2).
        assert_eq!(
            edge_offsets(
                &constraints,
                edge(0, Transition::Rise),
                edge(1, Transition::Rise)
            ),
            (2.0, 0.0)
        );
    }
}
