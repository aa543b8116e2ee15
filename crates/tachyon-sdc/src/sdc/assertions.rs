//! From SDC commands to the TAU assertions a `.timing` file gives: the TAU 2015
//! conventions, where an SDC says no more than a `.timing` file can.
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
//!   gives no assertion but still has a period. One clock only.
//! - `set_input_delay V`: arrival time V (the clock's edge time is not added).
//! - `set_input_transition V`: slew V.
//! - `set_output_delay V`: early required time -V, late required time period - V, with
//!   the period of `-clock` (or of the only clock when there is no `-clock`).
//! - `set_load V`: load V (the last one wins; `-min`/`-max` are not told apart).
//! - `set_units` has changed the values already. Any other command has no TAU
//!   assertion: an error (time such constraints with the OpenSTA conventions).
//!
//! Pins `u1/A` become the TAU names `u1:A`.

use std::collections::HashMap;

use super::{Object, ObjectKind, Sdc, SdcCommand};
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
    /// The pin or port, as the TAU files name it.
    pub pin: String,
    /// Values in the order early-rise, early-fall, late-rise, late-fall; `None` where no
    /// command set that condition.
    pub values: [Option<f64>; 4],
    /// The line of the first command that set a value.
    pub line: u32,
}

/// Why SDC commands could not be turned into TAU assertions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SdcError {
    /// A `set_output_delay` without `-clock` when not exactly one clock is defined.
    #[error("{file}:{line}: set_output_delay needs -clock: {n_clocks} clocks are defined")]
    AmbiguousClock {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// How many clocks were defined at that point.
        n_clocks: usize,
    },
    /// A command the TAU assertions cannot say.
    #[error(
        "{file}:{line}: {command} has no TAU 2015 assertion (the TAU conventions know clock, \
         at, slew, rat and load); time this SDC with the OpenSTA conventions"
    )]
    NotAnAssertion {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// The command.
        command: String,
    },
    /// An object that is neither a port nor a pin.
    #[error("{file}:{line}: {command} on {object}: the TAU assertions name ports and pins only")]
    NotAPin {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// The command.
        command: String,
        /// The object.
        object: String,
    },
    /// A second clock: the TAU conventions time one clock.
    #[error("{file}:{line}: a second clock \"{clock}\": the TAU conventions time one clock")]
    SecondClock {
        /// The SDC file.
        file: String,
        /// The command's line.
        line: u32,
        /// The clock.
        clock: String,
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

impl Sdc {
    /// Converts the commands to [`Assertion`]s, in order of first appearance per (kind,
    /// pin). Fails when a value is missing for some condition, or a command has no TAU
    /// assertion; see the module documentation for the conversion rules.
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
        let mut clock: Option<(String, f64)> = None;
        for command in &self.commands {
            let line = command.line();
            match command {
                SdcCommand::CreateClock(created) => {
                    match &clock {
                        Some((name, _)) if *name != created.name => {
                            return Err(SdcError::SecondClock {
                                file: self.file_name.clone(),
                                line,
                                clock: created.name.clone(),
                            })
                        }
                        _ => clock = Some((created.name.clone(), created.period)),
                    }
                    let [rise, fall] = created.waveform;
                    let duty = (fall - rise) / created.period * 100.0;
                    for pin in self.pin_names(&created.sources, command)? {
                        entries.push(Entry::Clock(Assertion::Clock {
                            pin,
                            period: created.period,
                            duty: Some(duty),
                        }));
                    }
                }
                SdcCommand::SetInputDelay(delay) => {
                    for pin in self.pin_names(&delay.objects, command)? {
                        merge(
                            &mut entries,
                            &mut partial_index,
                            (PartialAssertionKind::ArrivalTime, pin),
                            delay.conditions,
                            [Some(delay.delay); 4],
                            line,
                        );
                    }
                }
                SdcCommand::SetInputTransition(transition) => {
                    for pin in self.pin_names(&transition.objects, command)? {
                        merge(
                            &mut entries,
                            &mut partial_index,
                            (PartialAssertionKind::Slew, pin),
                            transition.conditions,
                            [Some(transition.transition); 4],
                            line,
                        );
                    }
                }
                SdcCommand::SetOutputDelay(delay) => {
                    let needs_period = (2..4).any(|index| delay.conditions.contains_index(index));
                    let late_value = if needs_period {
                        // `-clock` names a defined clock (the reader checks), the one
                        // clock there can be.
                        match &clock {
                            Some((_, period)) => Some(period - delay.delay),
                            None => {
                                return Err(SdcError::AmbiguousClock {
                                    file: self.file_name.clone(),
                                    line,
                                    n_clocks: 0,
                                })
                            }
                        }
                    } else {
                        None
                    };
                    let early_value = Some(-delay.delay);
                    let values = [early_value, early_value, late_value, late_value];
                    for pin in self.pin_names(&delay.objects, command)? {
                        merge(
                            &mut entries,
                            &mut partial_index,
                            (PartialAssertionKind::RequiredTime, pin),
                            delay.conditions,
                            values,
                            line,
                        );
                    }
                }
                SdcCommand::SetLoad(load) => {
                    for pin in self.pin_names(&load.objects, command)? {
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
                SdcCommand::SetUnits(_) => {}
                other => {
                    return Err(SdcError::NotAnAssertion {
                        file: other.location().file.to_string(),
                        line,
                        command: other.name().to_string(),
                    })
                }
            }
        }
        Ok(entries)
    }

    /// The TAU names of ports and pins (`u1/A` is `u1:A`).
    fn pin_names(&self, objects: &[Object], command: &SdcCommand) -> Result<Vec<String>, SdcError> {
        objects
            .iter()
            .map(|object| match object.kind {
                ObjectKind::Port => Ok(object.name.clone()),
                ObjectKind::Pin => Ok(match object.name.rsplit_once('/') {
                    Some((instance, pin)) => format!("{instance}:{pin}"),
                    None => object.name.clone(),
                }),
                _ => Err(SdcError::NotAPin {
                    file: command.location().file.to_string(),
                    line: command.line(),
                    command: command.name().to_string(),
                    object: object.to_string(),
                }),
            })
            .collect()
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
        let second = assertions(
            "create_clock -period 1 -name a\ncreate_clock -period 2 -name b\n\
             set_output_delay 1 out",
        )
        .unwrap_err();
        assert_eq!(
            second.to_string(),
            "t.sdc:2: a second clock \"b\": the TAU conventions time one clock"
        );
        let missing = assertions("set_input_transition 1 -max -rise a").unwrap_err();
        assert_eq!(
            missing.to_string(),
            "t.sdc:1: the slew of \"a\" is not set for early-rise early-fall late-fall"
        );
        let no_clock = assertions("set_output_delay 1 out").unwrap_err();
        assert!(matches!(no_clock, SdcError::AmbiguousClock { line: 1, .. }));
        let false_path = assertions("set_false_path -to out").unwrap_err();
        assert!(
            false_path
                .to_string()
                .starts_with("t.sdc:1: set_false_path has no TAU 2015 assertion"),
            "{false_path}"
        );
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
