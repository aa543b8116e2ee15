//! Interpretation of the supported SDC commands from Tcl words.
//!
//! Each command declares its options (flags, and options taking a value); words that
//! start with `-` and are not numbers are options, the rest are positional arguments.
//! An unknown option of a supported command is an error: silently dropping it could
//! change the constraint's meaning.

use tachyon_source::ParseError;

use super::tcl::{split_list, TclCommand, Word, WordValue};
use super::{
    ClockUncertainty, CreateClock, InputTransition, IoDelay, ObjectList, PathException, SdcCommand,
    SetLoad, Units,
};
use crate::conditions::ConditionMask;
use crate::number::{looks_like_number, parse_count, parse_number};

/// Interprets every command; unsupported ones become [`SdcCommand::Other`].
pub(super) fn interpret(
    file_name: &str,
    text: &str,
    tcl_commands: &[TclCommand],
) -> Result<Vec<SdcCommand>, ParseError> {
    let context = Context { file_name, text };
    let mut line_counter = LineCounter::default();
    let mut commands = Vec::with_capacity(tcl_commands.len());
    for tcl_command in tcl_commands {
        let line = line_counter.line_at(text, tcl_command.offset);
        commands.push(context.command(tcl_command, line)?);
    }
    Ok(commands)
}

/// Counts lines incrementally; command offsets only grow, so the whole file is scanned
/// once.
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: u32,
}

impl LineCounter {
    fn line_at(&mut self, text: &str, offset: usize) -> u32 {
        let newlines = text.as_bytes().get(self.offset..offset).map_or(0, |bytes| {
            bytes.iter().filter(|&&byte| byte == b'\n').count()
        });
        self.offset = offset.max(self.offset);
        self.line = self
            .line
            .saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        self.line + 1
    }
}

/// An option a command accepts.
struct OptionSpec {
    name: &'static str,
    takes_value: bool,
}

const fn flag(name: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        takes_value: false,
    }
}

const fn valued(name: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        takes_value: true,
    }
}

/// A command's words sorted into options and positional arguments.
struct Arguments<'w> {
    options: Vec<(&'static str, Option<&'w Word>)>,
    positionals: Vec<&'w Word>,
}

impl<'w> Arguments<'w> {
    fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(option, _)| *option == name)
    }

    /// The value of the last occurrence of a valued option.
    fn value(&self, name: &str) -> Option<&'w Word> {
        self.options
            .iter()
            .rev()
            .find(|(option, _)| *option == name)
            .and_then(|(_, value)| *value)
    }

    /// The values of every occurrence of a valued option, in order.
    fn values(&self, name: &str) -> Vec<&'w Word> {
        self.options
            .iter()
            .filter(|(option, _)| *option == name)
            .filter_map(|(_, value)| *value)
            .collect()
    }
}

/// The file being interpreted, for errors.
struct Context<'a> {
    file_name: &'a str,
    text: &'a str,
}

impl Context<'_> {
    fn error(&self, offset: usize, expected: &str) -> ParseError {
        ParseError::at(self.file_name, self.text, offset, expected)
    }

    fn command(&self, tcl_command: &TclCommand, line: u32) -> Result<SdcCommand, ParseError> {
        let Some((name_word, arguments)) = tcl_command.words.split_first() else {
            return Err(self.error(tcl_command.offset, "a command"));
        };
        let name = self.text_of(name_word, "a command name")?;
        let command = match name {
            "create_clock" => {
                SdcCommand::CreateClock(self.create_clock(name_word, arguments, line)?)
            }
            "set_input_delay" => {
                SdcCommand::SetInputDelay(self.io_delay(name, name_word, arguments, line)?)
            }
            "set_output_delay" => {
                SdcCommand::SetOutputDelay(self.io_delay(name, name_word, arguments, line)?)
            }
            "set_input_transition" => {
                SdcCommand::SetInputTransition(self.input_transition(name_word, arguments, line)?)
            }
            "set_load" => SdcCommand::SetLoad(self.set_load(name_word, arguments, line)?),
            "set_clock_uncertainty" => {
                SdcCommand::SetClockUncertainty(self.clock_uncertainty(name_word, arguments, line)?)
            }
            "set_false_path" => {
                let arguments = self.arguments(name, arguments, PATH_OPTIONS)?;
                self.expect_positionals(name_word, &arguments, 0, 0, "no positional argument")?;
                SdcCommand::SetFalsePath(self.path_exception(&arguments, line)?)
            }
            "set_multicycle_path" => {
                let arguments = self.arguments(name, arguments, MULTICYCLE_OPTIONS)?;
                self.expect_positionals(name_word, &arguments, 1, 1, "a path multiplier")?;
                let multiplier_word = arguments.positionals.first().copied();
                let multiplier = match multiplier_word {
                    Some(word) => self.count(word, "a path multiplier")?,
                    None => return Err(self.error(name_word.offset, "a path multiplier")),
                };
                SdcCommand::SetMulticyclePath {
                    path: self.path_exception(&arguments, line)?,
                    multiplier,
                    start: arguments.has("-start"),
                    end: arguments.has("-end"),
                }
            }
            "set_units" => SdcCommand::SetUnits(self.units(name_word, arguments, line)?),
            _ => SdcCommand::Other {
                name: name.to_string(),
                line,
            },
        };
        Ok(command)
    }

    fn create_clock(
        &self,
        name_word: &Word,
        words: &[Word],
        line: u32,
    ) -> Result<CreateClock, ParseError> {
        const OPTIONS: &[OptionSpec] = &[
            valued("-period"),
            valued("-name"),
            valued("-waveform"),
            valued("-comment"),
            flag("-add"),
        ];
        let arguments = self.arguments("create_clock", words, OPTIONS)?;
        self.expect_positionals(
            name_word,
            &arguments,
            0,
            1,
            "at most one list of clock sources",
        )?;
        let period = match arguments.value("-period") {
            Some(word) => self.number(word, "a clock period")?,
            None => {
                return Err(ParseError::with_found(
                    self.file_name,
                    self.text,
                    name_word.offset,
                    "create_clock with -period <period>",
                    "no -period",
                ))
            }
        };
        let name = match arguments.value("-name") {
            Some(word) => Some(self.text_of(word, "a clock name")?.to_string()),
            None => None,
        };
        let waveform = match arguments.value("-waveform") {
            Some(word) => {
                let edges = self.text_of(word, "a list of edge times")?;
                let mut values = Vec::new();
                for edge in split_list(edges) {
                    match parse_number(&edge) {
                        Some(value) => values.push(value),
                        None => return Err(self.error(word.offset, "a list of edge times")),
                    }
                }
                if values.len() < 2 || values.len() % 2 != 0 {
                    return Err(self.error(word.offset, "an even number of edge times"));
                }
                Some(values)
            }
            None => None,
        };
        let objects = match arguments.positionals.first() {
            Some(word) => Some(self.objects(word)?),
            None => None,
        };
        Ok(CreateClock {
            line,
            period,
            name,
            waveform,
            add: arguments.has("-add"),
            objects,
        })
    }

    fn io_delay(
        &self,
        command_name: &str,
        name_word: &Word,
        words: &[Word],
        line: u32,
    ) -> Result<IoDelay, ParseError> {
        const OPTIONS: &[OptionSpec] = &[
            valued("-clock"),
            flag("-clock_fall"),
            flag("-level_sensitive"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
            flag("-add_delay"),
            flag("-network_latency_included"),
            flag("-source_latency_included"),
        ];
        let arguments = self.arguments(command_name, words, OPTIONS)?;
        let (value_word, objects_word) =
            self.value_and_objects(name_word, &arguments, "a delay value and a list of ports")?;
        Ok(IoDelay {
            line,
            delay: self.number(value_word, "a delay value")?,
            clock: self.optional_text(&arguments, "-clock", "a clock name")?,
            clock_fall: arguments.has("-clock_fall"),
            add_delay: arguments.has("-add_delay"),
            conditions: condition_mask(&arguments),
            objects: self.objects(objects_word)?,
        })
    }

    fn input_transition(
        &self,
        name_word: &Word,
        words: &[Word],
        line: u32,
    ) -> Result<InputTransition, ParseError> {
        const OPTIONS: &[OptionSpec] = &[
            valued("-clock"),
            flag("-clock_fall"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
        ];
        let arguments = self.arguments("set_input_transition", words, OPTIONS)?;
        let (value_word, objects_word) = self.value_and_objects(
            name_word,
            &arguments,
            "a transition value and a list of ports",
        )?;
        Ok(InputTransition {
            line,
            transition: self.number(value_word, "a transition value")?,
            clock: self.optional_text(&arguments, "-clock", "a clock name")?,
            conditions: condition_mask(&arguments),
            objects: self.objects(objects_word)?,
        })
    }

    fn set_load(&self, name_word: &Word, words: &[Word], line: u32) -> Result<SetLoad, ParseError> {
        const OPTIONS: &[OptionSpec] = &[
            flag("-pin_load"),
            flag("-wire_load"),
            flag("-subtract_pin_load"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
        ];
        let arguments = self.arguments("set_load", words, OPTIONS)?;
        let (value_word, objects_word) = self.value_and_objects(
            name_word,
            &arguments,
            "a capacitance value and a list of ports",
        )?;
        Ok(SetLoad {
            line,
            capacitance: self.number(value_word, "a capacitance value")?,
            pin_load: arguments.has("-pin_load"),
            wire_load: arguments.has("-wire_load"),
            conditions: ConditionMask::from_flags(
                arguments.has("-min"),
                arguments.has("-max"),
                false,
                false,
            ),
            objects: self.objects(objects_word)?,
        })
    }

    fn clock_uncertainty(
        &self,
        name_word: &Word,
        words: &[Word],
        line: u32,
    ) -> Result<ClockUncertainty, ParseError> {
        const OPTIONS: &[OptionSpec] = &[flag("-setup"), flag("-hold")];
        let arguments = self.arguments("set_clock_uncertainty", words, OPTIONS)?;
        self.expect_positionals(
            name_word,
            &arguments,
            1,
            2,
            "an uncertainty value and at most one list of objects",
        )?;
        let value_word = match arguments.positionals.first() {
            Some(word) => word,
            None => return Err(self.error(name_word.offset, "an uncertainty value")),
        };
        let objects = match arguments.positionals.get(1) {
            Some(word) => Some(self.objects(word)?),
            None => None,
        };
        let (setup, hold) = both_when_neither(arguments.has("-setup"), arguments.has("-hold"));
        Ok(ClockUncertainty {
            line,
            uncertainty: self.number(value_word, "an uncertainty value")?,
            setup,
            hold,
            objects,
        })
    }

    fn path_exception(
        &self,
        arguments: &Arguments<'_>,
        line: u32,
    ) -> Result<PathException, ParseError> {
        let from = match arguments.value("-from") {
            Some(word) => Some(self.objects(word)?),
            None => None,
        };
        let to = match arguments.value("-to") {
            Some(word) => Some(self.objects(word)?),
            None => None,
        };
        let mut through = Vec::new();
        for word in arguments.values("-through") {
            through.push(self.objects(word)?);
        }
        let (setup, hold) = both_when_neither(arguments.has("-setup"), arguments.has("-hold"));
        let (rise, fall) = both_when_neither(arguments.has("-rise"), arguments.has("-fall"));
        Ok(PathException {
            line,
            from,
            to,
            through,
            setup,
            hold,
            rise,
            fall,
        })
    }

    fn units(&self, name_word: &Word, words: &[Word], line: u32) -> Result<Units, ParseError> {
        const OPTIONS: &[OptionSpec] = &[
            valued("-time"),
            valued("-capacitance"),
            valued("-resistance"),
            valued("-voltage"),
            valued("-current"),
            valued("-power"),
        ];
        let arguments = self.arguments("set_units", words, OPTIONS)?;
        self.expect_positionals(name_word, &arguments, 0, 0, "only options")?;
        Ok(Units {
            line,
            time: self.optional_text(&arguments, "-time", "a time unit")?,
            capacitance: self.optional_text(&arguments, "-capacitance", "a capacitance unit")?,
            resistance: self.optional_text(&arguments, "-resistance", "a resistance unit")?,
            voltage: self.optional_text(&arguments, "-voltage", "a voltage unit")?,
            current: self.optional_text(&arguments, "-current", "a current unit")?,
            power: self.optional_text(&arguments, "-power", "a power unit")?,
        })
    }

    /// Sorts a command's words into options and positionals.
    fn arguments<'w>(
        &self,
        command_name: &str,
        words: &'w [Word],
        specs: &[OptionSpec],
    ) -> Result<Arguments<'w>, ParseError> {
        let mut arguments = Arguments {
            options: Vec::new(),
            positionals: Vec::new(),
        };
        let mut remaining = words.iter();
        while let Some(word) = remaining.next() {
            let option_name = match &word.value {
                WordValue::Text {
                    text,
                    braced: false,
                } if text.starts_with('-') && !looks_like_number(text) => text.as_str(),
                _ => {
                    arguments.positionals.push(word);
                    continue;
                }
            };
            let Some(spec) = specs.iter().find(|spec| spec.name == option_name) else {
                let names: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
                return Err(self.error(
                    word.offset,
                    &format!("an option of {command_name} ({})", names.join(" ")),
                ));
            };
            let value = if spec.takes_value {
                match remaining.next() {
                    Some(value) => Some(value),
                    None => {
                        return Err(ParseError::with_found(
                            self.file_name,
                            self.text,
                            word.offset,
                            format!("a value after {}", spec.name),
                            "end of command",
                        ))
                    }
                }
            } else {
                None
            };
            arguments.options.push((spec.name, value));
        }
        Ok(arguments)
    }

    fn expect_positionals(
        &self,
        name_word: &Word,
        arguments: &Arguments<'_>,
        minimum: usize,
        maximum: usize,
        expected: &str,
    ) -> Result<(), ParseError> {
        let count = arguments.positionals.len();
        if count > maximum {
            let extra_offset = arguments
                .positionals
                .get(maximum)
                .map_or(name_word.offset, |word| word.offset);
            return Err(self.error(extra_offset, expected));
        }
        if count < minimum {
            return Err(ParseError::with_found(
                self.file_name,
                self.text,
                name_word.offset,
                expected,
                match count {
                    0 => "no argument".to_string(),
                    1 => "only 1 argument".to_string(),
                    _ => format!("only {count} arguments"),
                },
            ));
        }
        Ok(())
    }

    /// The two positional arguments `value objects` of the delay-like commands.
    fn value_and_objects<'w>(
        &self,
        name_word: &Word,
        arguments: &Arguments<'w>,
        expected: &str,
    ) -> Result<(&'w Word, &'w Word), ParseError> {
        self.expect_positionals(name_word, arguments, 2, 2, expected)?;
        match arguments.positionals.as_slice() {
            [value, objects] => Ok((value, objects)),
            _ => Err(self.error(name_word.offset, expected)),
        }
    }

    fn text_of<'w>(&self, word: &'w Word, expected: &str) -> Result<&'w str, ParseError> {
        match &word.value {
            WordValue::Text { text, .. } => Ok(text),
            WordValue::Command(_) => Err(self.error(word.offset, expected)),
        }
    }

    fn optional_text(
        &self,
        arguments: &Arguments<'_>,
        option: &str,
        expected: &str,
    ) -> Result<Option<String>, ParseError> {
        match arguments.value(option) {
            Some(word) => Ok(Some(self.text_of(word, expected)?.to_string())),
            None => Ok(None),
        }
    }

    fn number(&self, word: &Word, expected: &str) -> Result<f64, ParseError> {
        let text = self.text_of(word, expected)?;
        parse_number(text.trim()).ok_or_else(|| self.error(word.offset, expected))
    }

    fn count(&self, word: &Word, expected: &str) -> Result<u32, ParseError> {
        let text = self.text_of(word, expected)?;
        parse_count(text.trim()).ok_or_else(|| self.error(word.offset, expected))
    }

    /// Reads an object list: an object query in brackets, or a bare name or list.
    fn objects(&self, word: &Word) -> Result<ObjectList, ParseError> {
        let query = match &word.value {
            WordValue::Text { text, .. } => return Ok(ObjectList::Names(split_list(text))),
            WordValue::Command(query) => query,
        };
        let Some((query_name_word, query_arguments)) = query.split_first() else {
            return Err(self.error(word.offset, "an object query"));
        };
        const EXPECTED_QUERY: &str =
            "an object query (get_ports, get_pins, get_clocks, all_inputs or all_outputs)";
        let query_name = self.text_of(query_name_word, EXPECTED_QUERY)?;
        const PATTERN_OPTIONS: &[OptionSpec] = &[
            flag("-quiet"),
            flag("-hierarchical"),
            flag("-hier"),
            flag("-nocase"),
            flag("-regexp"),
        ];
        const ALL_OPTIONS: &[OptionSpec] = &[flag("-no_clocks")];
        let constructor: fn(Vec<String>) -> ObjectList = match query_name {
            "get_ports" | "get_port" => ObjectList::Ports,
            "get_pins" | "get_pin" => ObjectList::Pins,
            "get_clocks" | "get_clock" => ObjectList::Clocks,
            "all_inputs" | "all_outputs" => {
                let arguments = self.arguments(query_name, query_arguments, ALL_OPTIONS)?;
                self.expect_positionals(query_name_word, &arguments, 0, 0, "no argument")?;
                return Ok(if query_name == "all_inputs" {
                    ObjectList::AllInputs
                } else {
                    ObjectList::AllOutputs
                });
            }
            _ => return Err(self.error(query_name_word.offset, EXPECTED_QUERY)),
        };
        let arguments = self.arguments(query_name, query_arguments, PATTERN_OPTIONS)?;
        let mut names = Vec::new();
        for pattern_word in &arguments.positionals {
            let patterns = self.text_of(pattern_word, "a name pattern")?;
            names.extend(split_list(patterns));
        }
        Ok(constructor(names))
    }
}

const PATH_OPTIONS: &[OptionSpec] = &[
    valued("-from"),
    valued("-to"),
    valued("-through"),
    valued("-comment"),
    flag("-setup"),
    flag("-hold"),
    flag("-rise"),
    flag("-fall"),
];

const MULTICYCLE_OPTIONS: &[OptionSpec] = &[
    valued("-from"),
    valued("-to"),
    valued("-through"),
    valued("-comment"),
    flag("-setup"),
    flag("-hold"),
    flag("-rise"),
    flag("-fall"),
    flag("-start"),
    flag("-end"),
];

fn condition_mask(arguments: &Arguments<'_>) -> ConditionMask {
    ConditionMask::from_flags(
        arguments.has("-min"),
        arguments.has("-max"),
        arguments.has("-rise"),
        arguments.has("-fall"),
    )
}

/// SDC's convention for paired flags: giving neither means both.
fn both_when_neither(first: bool, second: bool) -> (bool, bool) {
    if first || second {
        (first, second)
    } else {
        (true, true)
    }
}
