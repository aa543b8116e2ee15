//! From SDC commands to the TAU assertions a `.timing` file gives.
//!
//! SDC sets values condition by condition (`-min -rise`, ...), so values are first merged
//! per (kind, pin) into [`PartialAssertion`]s with one `Option<f64>` per condition; later
//! commands overwrite earlier ones for the conditions they select. [`Sdc::to_assertions`]
//! then requires all four conditions of every arrival time, slew and required time to be
//! set (as the TAU `.timing` format does); callers that can handle gaps use
//! [`Sdc::to_partial_assertions`].
//!
//! Conversions (the TAU 2015 convention, checked on every benchmark):
//! - `create_clock` with sources: one `Clock` per source, duty 50 unless `-waveform`
//!   says otherwise (duty = (fall - rise) / period x 100). A virtual clock (no sources)
//!   gives no assertion but still has a period.
//! - `set_input_delay V`: arrival time V (the clock's edge time is not added).
//! - `set_input_transition V`: slew V.
//! - `set_output_delay V`: early required time -V, late required time period - V, with
//!   the period of `-clock` (or of the only clock when there is no `-clock`).
//! - `set_load V`: load V (the last one wins; `-min`/`-max` are not told apart).
//!
//! Names from `get_ports`, `get_pins` and bare lists are used as written; wildcards,
//! `all_inputs`/`all_outputs` and `get_clocks` need the design and are errors here.

use std::collections::HashMap;

use super::{CreateClock, ObjectList, Sdc, SdcCommand};
use crate::conditions::ConditionMask;
use crate::timing::Assertion;

/// Which four-condition assertion a [`PartialAssertion`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartialAssertionKind {
    /// From `set_input_delay`.
    ArrivalTime,
    /// From `set_input_transition`.
    Slew,
    /// From `set_output_delay`.
    RequiredTime,
}

/// A four-condition assertion whose conditions may be only partly set.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialAssertion {
    /// Arrival time, slew or required time.
    pub kind: PartialAssertionKind,
    /// The pin or port, as written in the SDC.
    pub pin: String,
    /// Values in the order early-rise, early-fall, late-rise, late-fall; `None` where no
    /// command set that condition.
    pub values: [Option<f64>; 4],
    /// The line of the first command that set a value.
    pub line: u32,
}

/// Why SDC commands could not be turned into assertions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SdcError {
    /// A `-clock` names a clock not created before.
    #[error("{file}:{line}: the clock \"{clock}\" is not defined before this command")]
    UnknownClock {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// The clock name.
        clock: String,
    },
    /// `set_output_delay` without `-clock`, and not exactly one clock to default to.
    #[error("{file}:{line}: set_output_delay needs -clock: {n_clocks} clocks are defined")]
    AmbiguousClock {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// How many clocks were defined at that point.
        n_clocks: usize,
    },
    /// Objects that cannot be resolved to pin names without the design.
    #[error(
        "{file}:{line}: {command} on {objects} needs the design to resolve; use port or pin names"
    )]
    UnresolvedObjects {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// The command name.
        command: String,
        /// What the objects were, e.g. "all_inputs".
        objects: String,
    },
    /// An arrival time, slew or required time with some conditions never set.
    #[error("{file}:{line}: the {kind} of \"{pin}\" is not set for {missing}")]
    MissingConditions {
        /// The SDC file.
        file: String,
        /// The line of the first command setting this assertion.
        line: u32,
        /// "arrival time", "slew" or "required time".
        kind: String,
        /// The pin or port.
        pin: String,
        /// The conditions missing, e.g. "early-rise late-fall".
        missing: String,
    },
}

/// One merged entry, in order of first appearance.
enum Entry {
    Clock(Assertion),
    Load { pin: String, capacitance: f64 },
    Partial(PartialAssertion),
}

/// The clocks defined so far, by name, with their periods.
struct ClockPeriods {
    periods: HashMap<String, f64>,
}

impl Sdc {
    /// Converts the TAU-relevant commands to [`Assertion`]s, in order of first
    /// appearance per (kind, pin). Fails when a value is missing for some condition; see
    /// the module documentation for the conversion rules.
    pub fn to_assertions(&self) -> Result<Vec<Assertion>, SdcError> {
        let entries = self.merged_entries()?;
        let mut assertions = Vec::with_capacity(entries.len());
        for entry in entries {
            let assertion = match entry {
                Entry::Clock(clock) => clock,
                Entry::Load { pin, capacitance } => Assertion::Load { pin, capacitance },
                Entry::Partial(partial) => self.complete(partial)?,
            };
            assertions.push(assertion);
        }
        Ok(assertions)
    }

    /// The arrival times, slews and required times, merged per pin, with the conditions
    /// no command set left as `None`.
    pub fn to_partial_assertions(&self) -> Result<Vec<PartialAssertion>, SdcError> {
        Ok(self
            .merged_entries()?
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Partial(partial) => Some(partial),
                _ => None,
            })
            .collect())
    }

    fn complete(&self, partial: PartialAssertion) -> Result<Assertion, SdcError> {
        const NAMES: [&str; 4] = ["early-rise", "early-fall", "late-rise", "late-fall"];
        let mut values = [0.0; 4];
        let mut missing = Vec::new();
        for ((value, partial_value), name) in values.iter_mut().zip(partial.values).zip(NAMES) {
            match partial_value {
                Some(set) => *value = set,
                None => missing.push(name),
            }
        }
        let kind_name = match partial.kind {
            PartialAssertionKind::ArrivalTime => "arrival time",
            PartialAssertionKind::Slew => "slew",
            PartialAssertionKind::RequiredTime => "required time",
        };
        if !missing.is_empty() {
            return Err(SdcError::MissingConditions {
                file: self.file_name.clone(),
                line: partial.line,
                kind: kind_name.to_string(),
                pin: partial.pin,
                missing: missing.join(" "),
            });
        }
        let pin = partial.pin;
        Ok(match partial.kind {
            PartialAssertionKind::ArrivalTime => Assertion::ArrivalTime { pin, values },
            PartialAssertionKind::Slew => Assertion::Slew { pin, values },
            PartialAssertionKind::RequiredTime => Assertion::RequiredTime { pin, values },
        })
    }

    /// Walks the commands once, merging values per (kind, pin).
    fn merged_entries(&self) -> Result<Vec<Entry>, SdcError> {
        let mut entries: Vec<Entry> = Vec::new();
        let mut partial_index: HashMap<(PartialAssertionKind, String), usize> = HashMap::new();
        let mut load_index: HashMap<String, usize> = HashMap::new();
        let mut clocks = ClockPeriods {
            periods: HashMap::new(),
        };
        for command in &self.commands {
            match command {
                SdcCommand::CreateClock(clock) => {
                    if let Some(name) = clock.clock_name() {
                        clocks.periods.insert(name.to_string(), clock.period);
                    }
                    if let Some(objects) = &clock.objects {
                        let duty = clock_duty(clock);
                        for pin in self.pin_names(objects, "create_clock", clock.line)? {
                            entries.push(Entry::Clock(Assertion::Clock {
                                pin: pin.clone(),
                                period: clock.period,
                                duty: Some(duty),
                            }));
                        }
                    }
                }
                SdcCommand::SetInputDelay(delay) => {
                    let names = self.pin_names(&delay.objects, "set_input_delay", delay.line)?;
                    for pin in names {
                        let values = [Some(delay.delay); 4];
                        merge(
                            &mut entries,
                            &mut partial_index,
                            (PartialAssertionKind::ArrivalTime, pin),
                            delay.conditions,
                            values,
                            delay.line,
                        );
                    }
                }
                SdcCommand::SetInputTransition(transition) => {
                    let names = self.pin_names(
                        &transition.objects,
                        "set_input_transition",
                        transition.line,
                    )?;
                    for pin in names {
                        merge(
                            &mut entries,
                            &mut partial_index,
                            (PartialAssertionKind::Slew, pin),
                            transition.conditions,
                            [Some(transition.transition); 4],
                            transition.line,
                        );
                    }
                }
                SdcCommand::SetOutputDelay(delay) => {
                    let names = self.pin_names(&delay.objects, "set_output_delay", delay.line)?;
                    let needs_period = (2..4).any(|index| delay.conditions.contains_index(index));
                    let late_value = if needs_period {
                        let period =
                            self.clock_period(&clocks, delay.clock.as_deref(), delay.line)?;
                        Some(period - delay.delay)
                    } else {
                        None
                    };
                    let early_value = Some(-delay.delay);
                    let values = [early_value, early_value, late_value, late_value];
                    for pin in names {
                        merge(
                            &mut entries,
                            &mut partial_index,
                            (PartialAssertionKind::RequiredTime, pin),
                            delay.conditions,
                            values,
                            delay.line,
                        );
                    }
                }
                SdcCommand::SetLoad(load) => {
                    for pin in self.pin_names(&load.objects, "set_load", load.line)? {
                        match load_index
                            .get(&pin)
                            .and_then(|&index| entries.get_mut(index))
                        {
                            Some(Entry::Load { capacitance, .. }) => {
                                *capacitance = load.capacitance;
                            }
                            _ => {
                                load_index.insert(pin.clone(), entries.len());
                                entries.push(Entry::Load {
                                    pin,
                                    capacitance: load.capacitance,
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(entries)
    }

    /// The period of the named clock, or of the only clock when no name is given.
    fn clock_period(
        &self,
        clocks: &ClockPeriods,
        clock: Option<&str>,
        line: u32,
    ) -> Result<f64, SdcError> {
        match clock {
            Some(name) => clocks
                .periods
                .get(name)
                .copied()
                .ok_or_else(|| SdcError::UnknownClock {
                    file: self.file_name.clone(),
                    line,
                    clock: name.to_string(),
                }),
            None => {
                let mut periods = clocks.periods.values();
                match (periods.next(), periods.next()) {
                    (Some(&period), None) => Ok(period),
                    _ => Err(SdcError::AmbiguousClock {
                        file: self.file_name.clone(),
                        line,
                        n_clocks: clocks.periods.len(),
                    }),
                }
            }
        }
    }

    /// The pin names of an object list that can be resolved without the design.
    fn pin_names(
        &self,
        objects: &ObjectList,
        command: &str,
        line: u32,
    ) -> Result<Vec<String>, SdcError> {
        let unresolved = |what: &str| SdcError::UnresolvedObjects {
            file: self.file_name.clone(),
            line,
            command: command.to_string(),
            objects: what.to_string(),
        };
        let names = match objects {
            ObjectList::Ports(names) | ObjectList::Pins(names) | ObjectList::Names(names) => names,
            ObjectList::Clocks(_) => return Err(unresolved("get_clocks")),
            ObjectList::AllInputs => return Err(unresolved("all_inputs")),
            ObjectList::AllOutputs => return Err(unresolved("all_outputs")),
        };
        if let Some(pattern) = names.iter().find(|name| name.contains(['*', '?'])) {
            return Err(unresolved(&format!("the pattern \"{pattern}\"")));
        }
        Ok(names.clone())
    }
}

/// The duty (percent of the period the clock is high) of a clock.
fn clock_duty(clock: &CreateClock) -> f64 {
    match clock.waveform.as_deref() {
        Some([rise, fall, ..]) if clock.period > 0.0 => (fall - rise) / clock.period * 100.0,
        _ => 50.0,
    }
}

/// Sets the selected conditions of the (kind, pin) entry, creating it if needed.
fn merge(
    entries: &mut Vec<Entry>,
    partial_index: &mut HashMap<(PartialAssertionKind, String), usize>,
    key: (PartialAssertionKind, String),
    conditions: ConditionMask,
    values: [Option<f64>; 4],
    line: u32,
) {
    let index = match partial_index.get(&key) {
        Some(&index) => index,
        None => {
            let index = entries.len();
            entries.push(Entry::Partial(PartialAssertion {
                kind: key.0,
                pin: key.1.clone(),
                values: [None; 4],
                line,
            }));
            partial_index.insert(key, index);
            index
        }
    };
    if let Some(Entry::Partial(partial)) = entries.get_mut(index) {
        for (condition, (slot, value)) in partial.values.iter_mut().zip(values).enumerate() {
            if conditions.contains_index(condition) && value.is_some() {
                *slot = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse_sdc;

    use super::*;

    fn assertions(text: &str) -> Result<Vec<Assertion>, SdcError> {
        parse_sdc("t.sdc", text).unwrap().to_assertions()
    }

    #[test]
    fn output_delay_uses_the_clock_period() {
        let text = "create_clock -period 50 -name c [get_ports clk]\n\
                    set_output_delay -10 -min [get_ports out] -clock c\n\
                    set_output_delay 30 -max [get_ports out] -clock c\n";
        let found = assertions(text).unwrap();
        assert_eq!(
            found.get(1),
            Some(&Assertion::RequiredTime {
                pin: "out".into(),
                values: [10.0, 10.0, 20.0, 20.0]
            })
        );
    }

    #[test]
    fn waveform_sets_the_duty() {
        let text = "create_clock -period 40 -waveform {0 10} clk";
        let found = assertions(text).unwrap();
        assert_eq!(
            found,
            vec![Assertion::Clock {
                pin: "clk".into(),
                period: 40.0,
                duty: Some(25.0)
            }]
        );
    }

    #[test]
    fn conversion_errors() {
        let unknown = assertions("set_output_delay 1 -clock c out").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "t.sdc:1: the clock \"c\" is not defined before this command"
        );
        let ambiguous = assertions(
            "create_clock -period 1 -name a\ncreate_clock -period 2 -name b\n\
             set_output_delay 1 out",
        )
        .unwrap_err();
        assert!(matches!(
            ambiguous,
            SdcError::AmbiguousClock {
                line: 3,
                n_clocks: 2,
                ..
            }
        ));
        let missing = assertions("set_input_transition 1 -max -rise a").unwrap_err();
        assert_eq!(
            missing.to_string(),
            "t.sdc:1: the slew of \"a\" is not set for early-rise early-fall late-fall"
        );
        let pattern = assertions("set_load 1 [get_ports out*]").unwrap_err();
        assert!(pattern.to_string().contains("the pattern \"out*\""));
    }

    #[test]
    fn early_only_output_delay_needs_no_clock() {
        let sdc = parse_sdc("t.sdc", "set_output_delay 2 -min out").unwrap();
        let partial = sdc.to_partial_assertions().unwrap();
        assert_eq!(
            partial,
            vec![PartialAssertion {
                kind: PartialAssertionKind::RequiredTime,
                pin: "out".into(),
                values: [Some(-2.0), Some(-2.0), None, None],
                line: 1
            }]
        );
    }
}
