//! A command's Tcl arguments sorted into options and positional arguments.
//!
//! Each command declares its options (flags, and options taking a value); a word that
//! starts with `-` and is not a number is an option. An option the command does not
//! declare is an error naming the options it does accept: silently dropping it could
//! change the constraint's meaning.

use molt_forked::prelude::Value;

/// An option a command accepts.
pub(crate) struct OptionSpec {
    pub(crate) name: &'static str,
    pub(crate) takes_value: bool,
}

/// A flag.
pub(crate) const fn flag(name: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        takes_value: false,
    }
}

/// An option with a value.
pub(crate) const fn valued(name: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        takes_value: true,
    }
}

/// The sorted arguments of one command.
pub(crate) struct Arguments<'v> {
    options: Vec<(&'static str, Option<&'v Value>)>,
    pub(crate) positionals: Vec<&'v Value>,
}

impl<'v> Arguments<'v> {
    /// Sorts `words` (the arguments after the command name) by `specs`.
    pub(crate) fn parse(words: &'v [Value], specs: &[OptionSpec]) -> Result<Arguments<'v>, String> {
        let mut arguments = Arguments {
            options: Vec::new(),
            positionals: Vec::new(),
        };
        let mut remaining = words.iter();
        while let Some(word) = remaining.next() {
            let text = word.as_str();
            let is_option = text.starts_with('-')
                && text.len() > 1
                && text.parse::<f64>().is_err()
                && !text.contains(char::is_whitespace);
            if !is_option {
                arguments.positionals.push(word);
                continue;
            }
            let Some(spec) = specs.iter().find(|spec| spec.name == text) else {
                let accepted: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
                return Err(if accepted.is_empty() {
                    format!("unknown option {text} (the command takes no options)")
                } else {
                    format!("unknown option {text} (accepted: {})", accepted.join(" "))
                });
            };
            let value = if spec.takes_value {
                match remaining.next() {
                    Some(value) => Some(value),
                    None => return Err(format!("option {text} needs a value")),
                }
            } else {
                None
            };
            arguments.options.push((spec.name, value));
        }
        Ok(arguments)
    }

    /// Whether option `name` was given.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(option, _)| *option == name)
    }

    /// The value of the last occurrence of a valued option.
    pub(crate) fn value(&self, name: &str) -> Option<&'v Value> {
        self.options
            .iter()
            .rev()
            .find(|(option, _)| *option == name)
            .and_then(|(_, value)| *value)
    }

    /// The values of every occurrence of a valued option, in order.
    pub(crate) fn values(&self, name: &str) -> Vec<&'v Value> {
        self.options
            .iter()
            .filter(|(option, _)| *option == name)
            .filter_map(|(_, value)| *value)
            .collect()
    }

    /// Checks the number of positional arguments.
    pub(crate) fn expect_positionals(
        &self,
        min: usize,
        max: usize,
        what: &str,
    ) -> Result<(), String> {
        let found = self.positionals.len();
        if found < min || found > max {
            let got: Vec<&str> = self
                .positionals
                .iter()
                .map(|value| value.as_str())
                .collect();
            return Err(format!(
                "expected {what}, found {} positional argument{}{}",
                found,
                if found == 1 { "" } else { "s" },
                if got.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", got.join(" "))
                }
            ));
        }
        Ok(())
    }
}

/// A finite number.
pub(crate) fn number(value: &Value, what: &str) -> Result<f64, String> {
    let text = value.as_str().trim();
    match text.parse::<f64>() {
        Ok(number) if number.is_finite() => Ok(number),
        _ => Err(format!("expected {what}, found \"{text}\"")),
    }
}

/// A whole number of at least `min`.
pub(crate) fn count(value: &Value, what: &str, min: u32) -> Result<u32, String> {
    let text = value.as_str().trim();
    match text.parse::<u32>() {
        Ok(number) if number >= min => Ok(number),
        _ => Err(format!("expected {what}, found \"{text}\"")),
    }
}

/// The elements of a Tcl list value.
pub(crate) fn list(value: &Value) -> Result<Vec<String>, String> {
    value
        .as_list()
        .map(|elements| {
            elements
                .iter()
                .map(|element| element.as_str().to_string())
                .collect()
        })
        .map_err(|error| format!("expected a Tcl list: {}", error.value().as_str()))
}
