//! Bitwise comparison of two timings of one graph (the GPU backend against the CPU
//! backend): every value of every pin, net, arc and test, NaN equal to NaN.

use tachyon_graph::{PinId, TimingData};
use tachyon_kernels::CONDITIONS;

/// How many values differ, per quantity, and how many were compared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Differences {
    pub arrival: usize,
    pub slew: usize,
    pub required: usize,
    pub slack: usize,
    pub net_load: usize,
    pub wire: usize,
    pub arc_delay: usize,
    pub tests: usize,
    /// Values compared in all.
    pub compared: usize,
}

impl Differences {
    /// Differences in all.
    pub fn total(&self) -> usize {
        self.arrival
            + self.slew
            + self.required
            + self.slack
            + self.net_load
            + self.wire
            + self.arc_delay
            + self.tests
    }
}

/// Equal bits, or both NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn count<const N: usize>(a: &[[f64; N]], b: &[[f64; N]], compared: &mut usize) -> usize {
    *compared += a.len().max(b.len()) * N;
    if a.len() != b.len() {
        return a.len().max(b.len()) * N;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| x.iter().zip(y).filter(|(p, q)| !same(**p, **q)).count())
        .sum()
}

/// Compares `a` and `b` value by value.
pub fn compare(a: &TimingData, b: &TimingData) -> Differences {
    let mut found = Differences::default();
    let compared = &mut found.compared;
    found.arrival = count(&a.arrival, &b.arrival, compared);
    found.slew = count(&a.slew, &b.slew, compared);
    found.required = count(&a.required, &b.required, compared);
    found.net_load = count(&a.net_load, &b.net_load, compared);
    found.wire = count(&a.wire_delay, &b.wire_delay, compared)
        + count(&a.wire_impulse, &b.wire_impulse, compared);
    found.arc_delay = count(&a.arc_delay, &b.arc_delay, compared);
    let tests = |data: &TimingData| -> Vec<[f64; 6]> {
        data.tests
            .iter()
            .map(|test| {
                let [r0, r1] = test.required_before_cppr;
                let [c0, c1] = test.credit;
                let [s0, s1] = test.slack;
                [r0, r1, c0, c1, s0, s1]
            })
            .collect()
    };
    found.tests = count(&tests(a), &tests(b), compared);
    let n_pins = a.arrival.len().min(b.arrival.len());
    for pin in 0..n_pins {
        for &(split, transition) in &CONDITIONS {
            let pin = PinId::from_index(pin);
            *compared += 1;
            let slack_a = a.slack_at(pin, split, transition).unwrap_or(f64::NAN);
            let slack_b = b.slack_at(pin, split, transition).unwrap_or(f64::NAN);
            if !same(slack_a, slack_b) {
                found.slack += 1;
            }
        }
    }
    found
}
