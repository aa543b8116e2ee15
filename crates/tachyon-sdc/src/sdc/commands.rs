//! The SDC commands: each reads its Tcl arguments, resolves its objects, converts its
//! values to ps and fF, and records an [`SdcCommand`]; the object queries return
//! handles. Errors say what was expected; the reader adds the file, line and command.

use molt_forked::prelude::*;

use super::args::{count, flag, list, number, valued, Arguments, OptionSpec};
use super::interp::{fail, SdcHost, UnsupportedMode};
use super::objects::{
    direction_of, find_instances, find_lib_cells, find_lib_pins, find_nets, find_pins, find_ports,
    handle, is_pattern, matches, parse_handle, unescape, PortDirection,
};
use super::{
    CaseAnalysis, ClockGroups, ClockLatency, ClockTransition, ClockUncertainty, CreateClock,
    DisableTiming, DrivingCell, InputTransition, IoDelay, Multicycle, Object, ObjectKind,
    PathDelay, PathException, SdcCommand, SdcUnits, SetLoad, SetupHold, TimingDerate, Units,
};
use crate::conditions::ConditionMask;

pub use super::interp::cmd_source;

/// Runs a command body; an `Err` becomes the command's error.
fn run<H: SdcHost>(
    interp: &mut Interp<H>,
    argv: &[Value],
    body: impl FnOnce(&mut Interp<H>, &[Value]) -> Result<Value, String>,
) -> MoltResult {
    let name = argv.first().map_or("", Value::as_str).to_string();
    match body(interp, argv.get(1..).unwrap_or(&[])) {
        Ok(value) => Ok(value),
        Err(message) => fail(interp, &name, message),
    }
}

/// Records `command`.
fn record<H: SdcHost>(interp: &mut Interp<H>, command: SdcCommand) -> Result<Value, String> {
    interp.context_mut().sdc_mut().commands.push(command);
    Ok(Value::empty())
}

/// The kinds an object argument accepts.
#[derive(Clone, Copy)]
struct Accept {
    clocks: bool,
    lib_cells: bool,
    instances: bool,
    ports: bool,
    pins: bool,
    nets: bool,
}

const PORTS_PINS: Accept = Accept {
    clocks: false,
    lib_cells: false,
    instances: false,
    ports: true,
    pins: true,
    nets: false,
};
const PORTS: Accept = Accept {
    pins: false,
    ..PORTS_PINS
};
const CLOCKS: Accept = Accept {
    clocks: true,
    lib_cells: false,
    instances: false,
    ports: false,
    pins: false,
    nets: false,
};
/// `-from`/`-to` of path exceptions.
const PATH_ENDS: Accept = Accept {
    clocks: true,
    lib_cells: false,
    instances: true,
    ports: true,
    pins: true,
    nets: false,
};
/// `-through` of path exceptions.
const PATH_POINTS: Accept = Accept {
    clocks: false,
    lib_cells: false,
    instances: true,
    ports: true,
    pins: true,
    nets: true,
};

impl Accept {
    fn accepts(self, kind: ObjectKind) -> bool {
        match kind {
            ObjectKind::Clock => self.clocks,
            ObjectKind::LibCell | ObjectKind::LibPin => self.lib_cells,
            ObjectKind::Instance => self.instances,
            ObjectKind::Port => self.ports,
            ObjectKind::Pin => self.pins,
            ObjectKind::Net => self.nets,
        }
    }

    fn describe(self) -> String {
        let mut kinds = Vec::new();
        for (accepted, word) in [
            (self.clocks, "clocks"),
            (self.lib_cells, "library cells"),
            (self.instances, "instances"),
            (self.ports, "ports"),
            (self.pins, "pins"),
            (self.nets, "nets"),
        ] {
            if accepted {
                kinds.push(word);
            }
        }
        kinds.join(", ")
    }
}

/// The objects an argument names: handles as they are, bare names as patterns looked up
/// among the accepted kinds, the most general kind first (as OpenSTA does). Without a
/// design, a bare name is a port (or a clock where only clocks are accepted).
fn resolve<H: SdcHost>(
    interp: &Interp<H>,
    value: &Value,
    accept: Accept,
) -> Result<Vec<Object>, String> {
    let mut objects = Vec::new();
    let mut pending: Vec<String> = list(value)?;
    pending.reverse();
    let mut n_expanded = 0usize;
    while let Some(element) = pending.pop() {
        // A nested list (`{{a b} c}`) is flattened.
        if element.contains(char::is_whitespace) {
            n_expanded += 1;
            if n_expanded > 1 << 20 {
                return Err("object list nested too deep".to_string());
            }
            let mut inner = list(&Value::from(element.as_str()))?;
            inner.reverse();
            pending.extend(inner);
            continue;
        }
        if let Some(object) = parse_handle(&element) {
            if !accept.accepts(object.kind) {
                return Err(format!(
                    "{object} is not one of the objects accepted here ({})",
                    accept.describe()
                ));
            }
            objects.push(object);
            continue;
        }
        let found = find_implicit(interp, &element, accept);
        if found.is_empty() {
            return Err(format!(
                "no {} matches \"{element}\"",
                accept.describe().replace(", ", " or ")
            ));
        }
        objects.extend(found);
    }
    Ok(objects)
}

/// The objects a bare name or pattern names, the most general accepted kind first.
fn find_implicit<H: SdcHost>(interp: &Interp<H>, pattern: &str, accept: Accept) -> Vec<Object> {
    let host = interp.context();
    if accept.clocks {
        let clocks = find_clocks(host.sdc().clock_names(), pattern);
        if !clocks.is_empty() {
            return clocks;
        }
    }
    let Some(design) = host.design() else {
        // No design: a name is taken as it is.
        if is_pattern(pattern) || !(accept.ports || accept.pins) {
            return Vec::new();
        }
        let name = unescape(pattern);
        let kind = if accept.ports {
            ObjectKind::Port
        } else {
            ObjectKind::Pin
        };
        return vec![Object::new(kind, name)];
    };
    let searches: [(bool, &dyn Fn() -> Vec<Object>); 5] = [
        (accept.lib_cells, &|| find_lib_cells(design, pattern)),
        (accept.instances, &|| find_instances(design, pattern, false)),
        (accept.ports, &|| find_ports(design, pattern)),
        (accept.pins, &|| find_pins(design, pattern, false)),
        (accept.nets, &|| find_nets(design, pattern, false)),
    ];
    for (accepted, search) in searches {
        if accepted {
            let found = search();
            if !found.is_empty() {
                return found;
            }
        }
    }
    Vec::new()
}

fn find_clocks(names: Vec<String>, pattern: &str) -> Vec<Object> {
    names
        .into_iter()
        .filter(|name| matches(pattern, name, true))
        .map(|name| Object::new(ObjectKind::Clock, name))
        .collect()
}

/// The clock names an argument names (handles or names of defined clocks).
fn clock_names<H: SdcHost>(interp: &Interp<H>, value: &Value) -> Result<Vec<String>, String> {
    Ok(resolve(interp, value, CLOCKS)?
        .into_iter()
        .map(|object| object.name)
        .collect())
}

/// The one clock an option such as `-clock` names.
fn one_clock<H: SdcHost>(interp: &Interp<H>, value: &Value) -> Result<String, String> {
    let names = clock_names(interp, value).map_err(|_| {
        format!(
            "the clock \"{}\" is not defined (create_clock first)",
            value.as_str()
        )
    })?;
    match <[String; 1]>::try_from(names) {
        Ok([name]) => Ok(name),
        Err(names) => Err(format!(
            "expected one clock, found {}: {}",
            names.len(),
            names.join(" ")
        )),
    }
}

/// A value in ps.
fn time<H: SdcHost>(interp: &Interp<H>, value: &Value, what: &str) -> Result<f64, String> {
    Ok(number(value, what)? * interp.context().sdc().units.time_ps)
}

/// A value in fF.
fn capacitance<H: SdcHost>(interp: &Interp<H>, value: &Value, what: &str) -> Result<f64, String> {
    Ok(number(value, what)? * interp.context().sdc().units.capacitance_ff)
}

fn location<H: SdcHost>(interp: &Interp<H>) -> super::Location {
    interp.context().sdc().location()
}

fn condition_mask(arguments: &Arguments<'_>) -> ConditionMask {
    ConditionMask::from_flags(
        arguments.has("-min"),
        arguments.has("-max"),
        arguments.has("-rise"),
        arguments.has("-fall"),
    )
}

/// Refuses options Tachyon reads but does not implement, by name.
fn refuse(arguments: &Arguments<'_>, options: &[&str]) -> Result<(), String> {
    match options.iter().find(|option| arguments.has(option)) {
        Some(option) => Err(format!("option {option} is not supported")),
        None => Ok(()),
    }
}

/// Checks that every object is a port or pin of the wanted direction.
fn check_direction(
    design: Option<&dyn super::DesignView>,
    objects: &[Object],
    wanted: PortDirection,
    what: &str,
) -> Result<(), String> {
    let Some(design) = design else {
        return Ok(());
    };
    for object in objects {
        match direction_of(design, object) {
            Some(direction) if direction == wanted || direction == PortDirection::Inout => {}
            Some(_) => return Err(format!("{object} is not {what}")),
            None => return Err(format!("no {object} in the design")),
        }
    }
    Ok(())
}

/// `create_clock -period P [-name N] [-waveform {rise fall}] [-add] [sources]`.
pub fn create_clock<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            valued("-period"),
            valued("-name"),
            valued("-waveform"),
            valued("-comment"),
            flag("-add"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        arguments.expect_positionals(0, 1, "at most one list of clock sources")?;
        let period_value = arguments
            .value("-period")
            .ok_or("expected -period <period>")?;
        let period = time(interp, period_value, "a clock period")?;
        if period <= 0.0 {
            return Err(format!(
                "expected a positive period, found {}",
                period_value.as_str()
            ));
        }
        let sources = match arguments.positionals.first() {
            Some(value) => resolve(interp, value, PORTS_PINS)?,
            None => Vec::new(),
        };
        let name = match arguments.value("-name") {
            Some(value) => value.as_str().to_string(),
            None => match sources.first() {
                Some(source) => source.name.clone(),
                None => return Err("a virtual clock (no sources) needs -name".to_string()),
            },
        };
        let (waveform, explicit_waveform) = match arguments.value("-waveform") {
            None => ([0.0, period / 2.0], false),
            Some(value) => {
                let edges = list(value)?;
                if edges.len() != 2 {
                    return Err(format!(
                        "expected a -waveform of two edge times {{rise fall}}, found {} \
                         (waveforms of more edges are not supported)",
                        edges.len()
                    ));
                }
                let rise = time(interp, &Value::from(edges[0].as_str()), "an edge time")?;
                let fall = time(interp, &Value::from(edges[1].as_str()), "an edge time")?;
                if !(rise >= 0.0 && rise < fall && fall - rise < period && rise < period) {
                    return Err(format!(
                        "expected edge times 0 <= rise < fall < rise + period, found {{{} {}}}",
                        edges[0], edges[1]
                    ));
                }
                ([rise, fall], true)
            }
        };
        let command = SdcCommand::CreateClock(CreateClock {
            location: location(interp),
            name: name.clone(),
            period,
            waveform,
            explicit_waveform,
            add: arguments.has("-add"),
            sources,
        });
        record(interp, command)?;
        Ok(Value::from(handle(&Object::new(ObjectKind::Clock, name))))
    })
}

/// `set_input_delay`.
pub fn set_input_delay<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let delay = io_delay(interp, words)?;
        check_direction(
            interp.context().design(),
            &delay.objects,
            PortDirection::Input,
            "an input",
        )
        .map_err(|error| format!("{error} (input delays on internal pins are not supported)"))?;
        record(interp, SdcCommand::SetInputDelay(delay))
    })
}

/// `set_output_delay`.
pub fn set_output_delay<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let delay = io_delay(interp, words)?;
        check_direction(
            interp.context().design(),
            &delay.objects,
            PortDirection::Output,
            "an output",
        )
        .map_err(|error| format!("{error} (output delays on internal pins are not supported)"))?;
        record(interp, SdcCommand::SetOutputDelay(delay))
    })
}

fn io_delay<H: SdcHost>(interp: &Interp<H>, words: &[Value]) -> Result<IoDelay, String> {
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
        valued("-reference_pin"),
    ];
    let arguments = Arguments::parse(words, OPTIONS)?;
    refuse(&arguments, &["-level_sensitive", "-reference_pin"])?;
    arguments.expect_positionals(2, 2, "a delay value and a list of ports")?;
    let clock = match arguments.value("-clock") {
        Some(value) => Some(one_clock(interp, value)?),
        None => None,
    };
    if clock.is_none() && arguments.has("-clock_fall") {
        return Err("-clock_fall needs -clock".to_string());
    }
    Ok(IoDelay {
        location: location(interp),
        delay: time(interp, arguments.positionals[0], "a delay value")?,
        clock,
        clock_fall: arguments.has("-clock_fall"),
        add_delay: arguments.has("-add_delay"),
        network_latency_included: arguments.has("-network_latency_included"),
        source_latency_included: arguments.has("-source_latency_included"),
        conditions: condition_mask(&arguments),
        objects: resolve(interp, arguments.positionals[1], PORTS_PINS)?,
    })
}

/// `set_input_transition V [-min] [-max] [-rise] [-fall] ports` (`-clock` is accepted
/// and changes nothing: a port's transition does not depend on a clock edge here).
pub fn set_input_transition<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            valued("-clock"),
            flag("-clock_fall"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        arguments.expect_positionals(2, 2, "a transition value and a list of ports")?;
        let transition = time(interp, arguments.positionals[0], "a transition value")?;
        if transition < 0.0 {
            return Err("expected a transition of at least 0".to_string());
        }
        let objects = resolve(interp, arguments.positionals[1], PORTS)?;
        check_direction(
            interp.context().design(),
            &objects,
            PortDirection::Input,
            "an input",
        )?;
        let command = SdcCommand::SetInputTransition(InputTransition {
            location: location(interp),
            transition,
            conditions: condition_mask(&arguments),
            objects,
        });
        record(interp, command)
    })
}

/// `set_load [-min] [-max] [-rise] [-fall] [-pin_load] [-wire_load] V ports`.
pub fn set_load<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            flag("-pin_load"),
            flag("-wire_load"),
            flag("-subtract_pin_load"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(&arguments, &["-subtract_pin_load"])?;
        arguments.expect_positionals(2, 2, "a capacitance value and a list of ports")?;
        let value = capacitance(interp, arguments.positionals[0], "a capacitance value")?;
        let command = SdcCommand::SetLoad(SetLoad {
            location: location(interp),
            capacitance: value,
            conditions: condition_mask(&arguments),
            objects: resolve(interp, arguments.positionals[1], PORTS)
                .map_err(|error| format!("{error} (loads on nets are not supported)"))?,
        });
        record(interp, command)
    })
}

/// `set_driving_cell -lib_cell C [-library L] [-pin P] [-from_pin F]
/// [-input_transition_rise R] [-input_transition_fall F] [-min] [-max] [-rise] [-fall]
/// ports`.
pub fn set_driving_cell<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            valued("-lib_cell"),
            valued("-cell"),
            valued("-library"),
            valued("-pin"),
            valued("-from_pin"),
            valued("-input_transition_rise"),
            valued("-input_transition_fall"),
            valued("-multiply_by"),
            flag("-dont_scale"),
            flag("-no_design_rule"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(&arguments, &["-multiply_by"])?;
        arguments.expect_positionals(1, 1, "a list of ports")?;
        let cell_value = arguments
            .value("-lib_cell")
            .or_else(|| arguments.value("-cell"))
            .ok_or("expected -lib_cell <cell>")?;
        let cell = cell_value
            .as_str()
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string();
        if let Some(design) = interp.context().design() {
            let pins = design
                .cell_pins(&cell)
                .ok_or_else(|| format!("no library cell {cell}"))?;
            for option in ["-pin", "-from_pin"] {
                if let Some(pin) = arguments.value(option) {
                    if !pins.iter().any(|(name, _)| name == pin.as_str()) {
                        return Err(format!("library cell {cell} has no pin {}", pin.as_str()));
                    }
                }
            }
        }
        let transition = |option: &str| -> Result<f64, String> {
            match arguments.value(option) {
                Some(value) => time(interp, value, "an input transition"),
                None => Ok(0.0),
            }
        };
        let objects = resolve(interp, arguments.positionals[0], PORTS)?;
        check_direction(
            interp.context().design(),
            &objects,
            PortDirection::Input,
            "an input",
        )?;
        let command = SdcCommand::SetDrivingCell(DrivingCell {
            location: location(interp),
            cell,
            pin: arguments
                .value("-pin")
                .map(|value| value.as_str().to_string()),
            from_pin: arguments
                .value("-from_pin")
                .map(|value| value.as_str().to_string()),
            input_transition: [
                transition("-input_transition_rise")?,
                transition("-input_transition_fall")?,
            ],
            conditions: condition_mask(&arguments),
            objects,
        });
        record(interp, command)
    })
}

/// `set_clock_uncertainty V [-setup] [-hold] (clocks | -from C -to C)`.
pub fn set_clock_uncertainty<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            flag("-setup"),
            flag("-hold"),
            flag("-rise"),
            flag("-fall"),
            valued("-from"),
            valued("-to"),
            valued("-rise_from"),
            valued("-fall_from"),
            valued("-rise_to"),
            valued("-fall_to"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(
            &arguments,
            &[
                "-rise",
                "-fall",
                "-rise_from",
                "-fall_from",
                "-rise_to",
                "-fall_to",
            ],
        )?;
        let between = match (arguments.value("-from"), arguments.value("-to")) {
            (Some(from), Some(to)) => Some((clock_names(interp, from)?, clock_names(interp, to)?)),
            (None, None) => None,
            _ => return Err("-from and -to go together".to_string()),
        };
        let (minimum, what) = if between.is_some() {
            (1, "an uncertainty value")
        } else {
            (2, "an uncertainty value and a list of clocks")
        };
        arguments.expect_positionals(minimum, minimum, what)?;
        let uncertainty = time(interp, arguments.positionals[0], "an uncertainty value")?;
        let clocks = match arguments.positionals.get(1) {
            Some(value) => clock_names(interp, value)
                .map_err(|error| format!("{error} (uncertainty on pins is not supported)"))?,
            None => Vec::new(),
        };
        let command = SdcCommand::SetClockUncertainty(ClockUncertainty {
            location: location(interp),
            uncertainty,
            checks: SetupHold::from_flags(arguments.has("-setup"), arguments.has("-hold")),
            clocks,
            between,
        });
        record(interp, command)
    })
}

/// `set_clock_latency V [-source] [-min] [-max] [-early] [-late] [-rise] [-fall] clocks`.
pub fn set_clock_latency<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            flag("-source"),
            flag("-min"),
            flag("-max"),
            flag("-early"),
            flag("-late"),
            flag("-rise"),
            flag("-fall"),
            valued("-clock"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(&arguments, &["-clock"])?;
        arguments.expect_positionals(2, 2, "a latency value and a list of clocks")?;
        let latency = time(interp, arguments.positionals[0], "a latency value")?;
        let clocks = clock_names(interp, arguments.positionals[1])
            .map_err(|error| format!("{error} (latency on pins is not supported)"))?;
        let conditions = ConditionMask::from_flags(
            arguments.has("-min") || arguments.has("-early"),
            arguments.has("-max") || arguments.has("-late"),
            arguments.has("-rise"),
            arguments.has("-fall"),
        );
        let command = SdcCommand::SetClockLatency(ClockLatency {
            location: location(interp),
            latency,
            source: arguments.has("-source"),
            conditions,
            clocks,
        });
        record(interp, command)
    })
}

/// `set_clock_transition V [-min] [-max] [-rise] [-fall] clocks`.
pub fn set_clock_transition<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[flag("-min"), flag("-max"), flag("-rise"), flag("-fall")];
        let arguments = Arguments::parse(words, OPTIONS)?;
        arguments.expect_positionals(2, 2, "a transition value and a list of clocks")?;
        let command = SdcCommand::SetClockTransition(ClockTransition {
            location: location(interp),
            transition: time(interp, arguments.positionals[0], "a transition value")?,
            conditions: condition_mask(&arguments),
            clocks: clock_names(interp, arguments.positionals[1])?,
        });
        record(interp, command)
    })
}

/// `set_propagated_clock objects`: clocks, or the ports and pins that are their sources.
pub fn set_propagated_clock<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let arguments = Arguments::parse(words, &[])?;
        arguments.expect_positionals(1, 1, "a list of clocks")?;
        let accept = Accept {
            ports: true,
            pins: true,
            ..CLOCKS
        };
        let mut clocks = Vec::new();
        for object in resolve(interp, arguments.positionals[0], accept)? {
            if object.kind == ObjectKind::Clock {
                clocks.push(object.name);
                continue;
            }
            // A clock source: the clocks defined on it.
            let mut found = false;
            for command in &interp.context().sdc().commands {
                if let SdcCommand::CreateClock(clock) = command {
                    if clock.sources.contains(&object) && !clocks.contains(&clock.name) {
                        clocks.push(clock.name.clone());
                        found = true;
                    }
                }
            }
            if !found {
                return Err(format!(
                    "{object} is no clock source (propagating clocks from other pins is not supported)"
                ));
            }
        }
        let command = SdcCommand::SetPropagatedClock {
            location: location(interp),
            clocks,
        };
        record(interp, command)
    })
}

/// `set_clock_groups [-name N] [-asynchronous|-logically_exclusive|
/// -physically_exclusive] -group clocks ...`.
pub fn set_clock_groups<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            valued("-name"),
            flag("-asynchronous"),
            flag("-logically_exclusive"),
            flag("-physically_exclusive"),
            flag("-allow_paths"),
            valued("-group"),
            valued("-comment"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(&arguments, &["-allow_paths"])?;
        arguments.expect_positionals(0, 0, "no positional argument")?;
        let kinds = [
            "-asynchronous",
            "-logically_exclusive",
            "-physically_exclusive",
        ];
        if kinds.iter().filter(|kind| arguments.has(kind)).count() != 1 {
            return Err(
                "expected one of -asynchronous, -logically_exclusive, -physically_exclusive"
                    .to_string(),
            );
        }
        let mut groups = Vec::new();
        for value in arguments.values("-group") {
            groups.push(clock_names(interp, value)?);
        }
        if groups.is_empty() {
            return Err("expected at least one -group".to_string());
        }
        let command = SdcCommand::SetClockGroups(ClockGroups {
            location: location(interp),
            groups,
        });
        record(interp, command)
    })
}

const PATH_OPTIONS: &[OptionSpec] = &[
    valued("-from"),
    valued("-to"),
    valued("-through"),
    flag("-setup"),
    flag("-hold"),
    flag("-rise"),
    flag("-fall"),
    valued("-comment"),
    flag("-reset_path"),
];

fn path_exception<H: SdcHost>(
    interp: &Interp<H>,
    arguments: &Arguments<'_>,
    checks: SetupHold,
) -> Result<PathException, String> {
    let objects = |option: &str, accept: Accept| -> Result<Vec<Object>, String> {
        match arguments.value(option) {
            Some(value) => resolve(interp, value, accept),
            None => Ok(Vec::new()),
        }
    };
    let mut through = Vec::new();
    for value in arguments.values("-through") {
        through.push(resolve(interp, value, PATH_POINTS)?);
    }
    let (rise, fall) = match (arguments.has("-rise"), arguments.has("-fall")) {
        (false, false) => (true, true),
        flags => flags,
    };
    Ok(PathException {
        location: location(interp),
        from: objects("-from", PATH_ENDS)?,
        to: objects("-to", PATH_ENDS)?,
        through,
        checks,
        end_transitions: [rise, fall],
    })
}

/// `set_false_path [-setup] [-hold] [-rise] [-fall] [-from] [-through]... [-to]`.
pub fn set_false_path<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let arguments = Arguments::parse(words, PATH_OPTIONS)?;
        refuse(&arguments, &["-reset_path"])?;
        arguments.expect_positionals(0, 0, "no positional argument")?;
        let checks = SetupHold::from_flags(arguments.has("-setup"), arguments.has("-hold"));
        let path = path_exception(interp, &arguments, checks)?;
        record(interp, SdcCommand::SetFalsePath(path))
    })
}

/// `set_multicycle_path N [-setup] [-hold] [-start] [-end] path`.
pub fn set_multicycle_path<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let mut options: Vec<OptionSpec> = PATH_OPTIONS
            .iter()
            .map(|spec| OptionSpec { ..*spec })
            .collect();
        options.push(flag("-start"));
        options.push(flag("-end"));
        let arguments = Arguments::parse(words, &options)?;
        refuse(&arguments, &["-reset_path"])?;
        arguments.expect_positionals(1, 1, "a path multiplier")?;
        let hold = arguments.has("-hold");
        let multiplier = count(
            arguments.positionals[0],
            "a whole path multiplier",
            if hold { 0 } else { 1 },
        )?;
        // Without -setup/-hold a multicycle path is a setup one (the hold check follows
        // it), as in SDC.
        let checks = SetupHold {
            setup: !hold || arguments.has("-setup"),
            hold,
        };
        if arguments.has("-start") && arguments.has("-end") {
            return Err("-start and -end exclude each other".to_string());
        }
        let path = path_exception(interp, &arguments, checks)?;
        let command = SdcCommand::SetMulticyclePath(Multicycle {
            path,
            multiplier,
            start: arguments.has("-start"),
        });
        record(interp, command)
    })
}

/// `set_max_delay V path`.
pub fn set_max_delay<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        path_delay(interp, words, true)
    })
}

/// `set_min_delay V path`.
pub fn set_min_delay<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        path_delay(interp, words, false)
    })
}

fn path_delay<H: SdcHost>(
    interp: &mut Interp<H>,
    words: &[Value],
    max: bool,
) -> Result<Value, String> {
    let mut options: Vec<OptionSpec> = PATH_OPTIONS
        .iter()
        .filter(|spec| spec.name != "-setup" && spec.name != "-hold")
        .map(|spec| OptionSpec { ..*spec })
        .collect();
    options.push(flag("-ignore_clock_latency"));
    let arguments = Arguments::parse(words, &options)?;
    refuse(&arguments, &["-reset_path", "-ignore_clock_latency"])?;
    arguments.expect_positionals(1, 1, "a delay value")?;
    let delay = time(interp, arguments.positionals[0], "a delay value")?;
    let checks = SetupHold {
        setup: max,
        hold: !max,
    };
    let path = path_exception(interp, &arguments, checks)?;
    record(
        interp,
        SdcCommand::SetPathDelay(PathDelay { path, delay, max }),
    )
}

/// `set_disable_timing [-from P] [-to P] objects`.
pub fn set_disable_timing<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[valued("-from"), valued("-to"), flag("-restore")];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(&arguments, &["-restore"])?;
        arguments.expect_positionals(1, 1, "a list of objects")?;
        let accept = Accept {
            clocks: false,
            lib_cells: true,
            instances: true,
            ports: true,
            pins: true,
            nets: false,
        };
        let objects = resolve(interp, arguments.positionals[0], accept)?;
        let from = arguments
            .value("-from")
            .map(|value| value.as_str().to_string());
        let to = arguments
            .value("-to")
            .map(|value| value.as_str().to_string());
        if (from.is_some() || to.is_some())
            && objects
                .iter()
                .any(|object| !matches!(object.kind, ObjectKind::Instance | ObjectKind::LibCell))
        {
            return Err("-from and -to apply to instances and library cells only".to_string());
        }
        let command = SdcCommand::SetDisableTiming(DisableTiming {
            location: location(interp),
            objects,
            from,
            to,
        });
        record(interp, command)
    })
}

/// `set_case_analysis 0|1|zero|one objects`.
pub fn set_case_analysis<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let arguments = Arguments::parse(words, &[])?;
        arguments.expect_positionals(2, 2, "a value (0 or 1) and a list of ports or pins")?;
        let value = match arguments.positionals[0].as_str() {
            "0" | "zero" => false,
            "1" | "one" => true,
            "rise" | "rising" | "fall" | "falling" => {
                return Err("transition case analysis (rise/fall) is not supported".to_string())
            }
            other => return Err(format!("expected 0, 1, zero or one, found \"{other}\"")),
        };
        let command = SdcCommand::SetCaseAnalysis(CaseAnalysis {
            location: location(interp),
            value,
            objects: resolve(interp, arguments.positionals[1], PORTS_PINS)?,
        });
        record(interp, command)
    })
}

/// `set_timing_derate V [-early|-late] [-rise|-fall] [-clock|-data]
/// [-cell_delay|-net_delay]`.
pub fn set_timing_derate<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            flag("-early"),
            flag("-late"),
            flag("-min"),
            flag("-max"),
            flag("-rise"),
            flag("-fall"),
            flag("-clock"),
            flag("-data"),
            flag("-cell_delay"),
            flag("-net_delay"),
            flag("-cell_check"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        refuse(&arguments, &["-cell_check"])?;
        arguments.expect_positionals(
            1,
            1,
            "a derating factor (derates of single objects are not supported)",
        )?;
        let factor = number(arguments.positionals[0], "a derating factor")?;
        if factor <= 0.0 {
            return Err(format!("expected a positive factor, found {factor}"));
        }
        let both = |a: bool, b: bool| if a || b { (a, b) } else { (true, true) };
        let (early, late) = both(
            arguments.has("-early") || arguments.has("-min"),
            arguments.has("-late") || arguments.has("-max"),
        );
        let (rise, fall) = both(arguments.has("-rise"), arguments.has("-fall"));
        let (clock, data) = both(arguments.has("-clock"), arguments.has("-data"));
        let (cell_delay, net_delay) =
            both(arguments.has("-cell_delay"), arguments.has("-net_delay"));
        let command = SdcCommand::SetTimingDerate(TimingDerate {
            location: location(interp),
            factor,
            early,
            late,
            transitions: [rise, fall],
            clock,
            data,
            cell_delay,
            net_delay,
        });
        record(interp, command)
    })
}

/// The multiplier of a unit such as `ns`, `1ps`, `1.0fF`, `kOhm` relative to `base`
/// units, whose prefixes scale by powers of 1000.
fn unit_scale(written: &str, suffix: &str, base_exponent: i32) -> Option<f64> {
    let lower = written.trim().to_ascii_lowercase();
    let rest = lower.strip_suffix(&suffix.to_ascii_lowercase())?;
    let split = rest
        .find(|character: char| character.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let (number, prefix) = rest.split_at(split);
    let number = if number.is_empty() {
        1.0
    } else {
        number
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value > 0.0)?
    };
    let exponent = match prefix {
        "" => 0,
        "k" => 3,
        "m" => -3,
        "u" => -6,
        "n" => -9,
        "p" => -12,
        "f" => -15,
        "a" => -18,
        _ => return None,
    };
    Some(number * 10f64.powi(exponent - base_exponent))
}

/// `set_units [-time U] [-capacitance U] [-resistance U] ...`: values after it are in
/// these units.
pub fn set_units<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        const OPTIONS: &[OptionSpec] = &[
            valued("-time"),
            valued("-capacitance"),
            valued("-resistance"),
            valued("-voltage"),
            valued("-current"),
            valued("-power"),
            valued("-distance"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        arguments.expect_positionals(0, 0, "only options")?;
        let mut units: SdcUnits = interp.context().sdc().units;
        let text = |option: &str| {
            arguments
                .value(option)
                .map(|value| value.as_str().to_string())
        };
        if let Some(written) = text("-time") {
            units.time_ps = unit_scale(&written, "s", -12).ok_or_else(|| {
                format!("expected a time unit such as ns or 1ps, found \"{written}\"")
            })?;
        }
        if let Some(written) = text("-capacitance") {
            units.capacitance_ff = unit_scale(&written, "f", -15).ok_or_else(|| {
                format!("expected a capacitance unit such as pF or 1fF, found \"{written}\"")
            })?;
        }
        if let Some(written) = text("-resistance") {
            units.resistance_kohm = unit_scale(&written, "ohm", 3).ok_or_else(|| {
                format!("expected a resistance unit such as kOhm, found \"{written}\"")
            })?;
        }
        let state = interp.context_mut().sdc_mut();
        if units != state.default_units {
            tracing::info!(
                "{}: set_units changes the SDC units from the library's (values now in {} ps, {} fF)",
                state.location(),
                units.time_ps,
                units.capacitance_ff
            );
        }
        state.units = units;
        let command = SdcCommand::SetUnits(Units {
            location: location(interp),
            time: text("-time"),
            capacitance: text("-capacitance"),
            resistance: text("-resistance"),
        });
        record(interp, command)
    })
}

/// `current_design [name]`: the design's name.
pub fn current_design<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let arguments = Arguments::parse(words, &[])?;
        arguments.expect_positionals(0, 1, "at most a design name")?;
        let name = interp
            .context()
            .design()
            .map(|design| design.design_name())
            .unwrap_or_default();
        if let (Some(asked), false) = (arguments.positionals.first(), name.is_empty()) {
            if asked.as_str() != name {
                return Err(format!(
                    "the design is \"{name}\", not \"{}\"",
                    asked.as_str()
                ));
            }
        }
        Ok(Value::from(name))
    })
}

/// The list value of `objects` as handles.
fn handles(objects: &[Object]) -> Value {
    Value::from(
        objects
            .iter()
            .map(|object| Value::from(handle(object)))
            .collect::<Vec<Value>>(),
    )
}

/// The patterns of a query, each looked up with `find`; an unmatched pattern is an
/// error unless `-quiet`.
fn query<H: SdcHost>(
    interp: &mut Interp<H>,
    words: &[Value],
    kind: &str,
    find: impl Fn(&H, &str, bool) -> Result<Vec<Object>, String>,
) -> Result<Value, String> {
    const OPTIONS: &[OptionSpec] = &[
        flag("-quiet"),
        flag("-hierarchical"),
        flag("-hier"),
        flag("-nocase"),
        flag("-regexp"),
        valued("-of_objects"),
        valued("-filter"),
    ];
    let arguments = Arguments::parse(words, OPTIONS)?;
    refuse(
        &arguments,
        &["-nocase", "-regexp", "-of_objects", "-filter"],
    )?;
    arguments.expect_positionals(1, 1, "a list of patterns")?;
    let hierarchical = arguments.has("-hierarchical") || arguments.has("-hier");
    let mut objects = Vec::new();
    for pattern in list(arguments.positionals[0])? {
        let found = find(interp.context(), &pattern, hierarchical)?;
        if found.is_empty() && !arguments.has("-quiet") {
            return Err(format!("no {kind} matches \"{pattern}\""));
        }
        objects.extend(found);
    }
    Ok(handles(&objects))
}

/// A design query's finder, or names taken literally without a design.
fn with_design<H: SdcHost>(
    host: &H,
    pattern: &str,
    literal: ObjectKind,
    find: impl Fn(&dyn super::DesignView) -> Vec<Object>,
) -> Result<Vec<Object>, String> {
    match host.design() {
        Some(design) => Ok(find(design)),
        None if is_pattern(pattern) => Err(format!(
            "the pattern \"{pattern}\" needs the design (read it before the SDC)"
        )),
        None => Ok(vec![Object::new(literal, unescape(pattern))]),
    }
}

/// A design query: `kind` names the objects in messages, `literal` is their kind
/// without a design.
fn design_query<H: SdcHost>(
    interp: &mut Interp<H>,
    argv: &[Value],
    kind: &str,
    literal: ObjectKind,
    find: fn(&dyn super::DesignView, &str, bool) -> Vec<Object>,
) -> MoltResult {
    run(interp, argv, |interp, words| {
        query(interp, words, kind, |host, pattern, hierarchical| {
            with_design(host, pattern, literal, |design| {
                find(design, pattern, hierarchical)
            })
        })
    })
}

/// `get_ports [-quiet] patterns`.
pub fn get_ports<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    design_query(
        interp,
        argv,
        "port",
        ObjectKind::Port,
        |design, pattern, _| find_ports(design, pattern),
    )
}

/// `get_pins [-hierarchical] [-quiet] patterns`.
pub fn get_pins<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    design_query(interp, argv, "pin", ObjectKind::Pin, find_pins)
}

/// `get_nets [-hierarchical] [-quiet] patterns`.
pub fn get_nets<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    design_query(interp, argv, "net", ObjectKind::Net, find_nets)
}

/// `get_cells [-hierarchical] [-quiet] patterns`: instances.
pub fn get_cells<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    design_query(
        interp,
        argv,
        "instance",
        ObjectKind::Instance,
        find_instances,
    )
}

/// `get_clocks [-quiet] patterns`.
pub fn get_clocks<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        query(interp, words, "clock", |host, pattern, _| {
            Ok(find_clocks(host.sdc().clock_names(), pattern))
        })
    })
}

/// `get_lib_cells [-quiet] patterns`.
pub fn get_lib_cells<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    design_query(
        interp,
        argv,
        "library cell",
        ObjectKind::LibCell,
        |design, pattern, _| find_lib_cells(design, pattern),
    )
}

/// `get_lib_pins [-quiet] patterns`.
pub fn get_lib_pins<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    design_query(
        interp,
        argv,
        "library pin",
        ObjectKind::LibPin,
        |design, pattern, _| find_lib_pins(design, pattern),
    )
}

/// The ports of a direction (inout ports count as both).
fn ports_of<H: SdcHost>(interp: &Interp<H>, wanted: PortDirection) -> Result<Vec<Object>, String> {
    let design = interp
        .context()
        .design()
        .ok_or("the design's ports are needed (read the design before the SDC)")?;
    Ok(design
        .ports()
        .into_iter()
        .filter(|(_, direction)| *direction == wanted || *direction == PortDirection::Inout)
        .map(|(name, _)| Object::new(ObjectKind::Port, name))
        .collect())
}

/// `all_inputs [-no_clocks]`.
pub fn all_inputs<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        let arguments = Arguments::parse(words, &[flag("-no_clocks")])?;
        arguments.expect_positionals(0, 0, "no positional argument")?;
        let mut ports = ports_of(interp, PortDirection::Input)?;
        if arguments.has("-no_clocks") {
            let mut sources = Vec::new();
            for command in &interp.context().sdc().commands {
                if let SdcCommand::CreateClock(clock) = command {
                    sources.extend(clock.sources.iter().cloned());
                }
            }
            ports.retain(|port| !sources.contains(port));
        }
        Ok(handles(&ports))
    })
}

/// `all_outputs`.
pub fn all_outputs<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        Arguments::parse(words, &[])?.expect_positionals(0, 0, "no argument")?;
        Ok(handles(&ports_of(interp, PortDirection::Output)?))
    })
}

/// `all_clocks`.
pub fn all_clocks<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |interp, words| {
        Arguments::parse(words, &[])?.expect_positionals(0, 0, "no argument")?;
        let clocks: Vec<Object> = interp
            .context()
            .sdc()
            .clock_names()
            .into_iter()
            .map(|name| Object::new(ObjectKind::Clock, name))
            .collect();
        Ok(handles(&clocks))
    })
}

/// `get_object_name objects` (also `get_full_name`, `get_name`): the names.
pub fn get_object_name<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |_, words| {
        let arguments = Arguments::parse(words, &[])?;
        arguments.expect_positionals(1, 1, "a list of objects")?;
        let names: Vec<Value> = list(arguments.positionals[0])?
            .iter()
            .map(|word| {
                Value::from(parse_handle(word).map_or_else(|| word.clone(), |object| object.name))
            })
            .collect();
        Ok(if names.len() == 1 {
            names.into_iter().next().unwrap_or_else(Value::empty)
        } else {
            Value::from(names)
        })
    })
}

/// A design-rule or optimization command: it changes no timing; noted.
pub fn design_rule<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    let name = argv.first().map_or("", Value::as_str).to_string();
    interp.context_mut().sdc_mut().note(
        &name,
        "changes no timing (design rules are not checked); not applied",
        false,
    );
    molt_ok!()
}

/// A command Tachyon does not implement: an error, or a warning note.
pub fn unsupported<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    let name = argv.first().map_or("", Value::as_str).to_string();
    let state = interp.context_mut().sdc_mut();
    if state.unsupported == UnsupportedMode::Warn {
        state.note(&name, "not supported by Tachyon; not applied", true);
        return molt_ok!();
    }
    fail(
        interp,
        &name,
        "not supported by Tachyon (read with --sdc-unsupported warn to skip it with a warning)"
            .to_string(),
    )
}

/// `format spec args...`: `%s %d %i %f %e %g %x %o %c %%` with flags, width and
/// precision (the interpreter has no `format` of its own).
pub fn format<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |_, words| {
        let (spec, values) = words.split_first().ok_or("expected a format string")?;
        let mut out = String::new();
        let mut values = values.iter();
        let mut characters = spec.as_str().chars().peekable();
        while let Some(character) = characters.next() {
            if character != '%' {
                out.push(character);
                continue;
            }
            if characters.peek() == Some(&'%') {
                characters.next();
                out.push('%');
                continue;
            }
            let mut flags = String::new();
            while let Some(&flag) = characters.peek().filter(|c| "-+ 0#".contains(**c)) {
                flags.push(flag);
                characters.next();
            }
            let mut width = String::new();
            while let Some(&digit) = characters.peek().filter(|c| c.is_ascii_digit()) {
                width.push(digit);
                characters.next();
            }
            let mut precision: Option<usize> = None;
            if characters.peek() == Some(&'.') {
                characters.next();
                let mut digits = String::new();
                while let Some(&digit) = characters.peek().filter(|c| c.is_ascii_digit()) {
                    digits.push(digit);
                    characters.next();
                }
                precision = Some(digits.parse().unwrap_or(0));
            }
            let conversion = characters
                .next()
                .ok_or("format ends inside a % conversion")?;
            let value = values
                .next()
                .ok_or("not enough arguments for the format string")?;
            let text = value.as_str();
            let body = match conversion {
                's' => match precision {
                    Some(length) => text.chars().take(length).collect(),
                    None => text.to_string(),
                },
                'd' | 'i' => {
                    let number = value
                        .as_int()
                        .map_err(|_| format!("expected an integer, found \"{text}\""))?;
                    if flags.contains('+') && number >= 0 {
                        format!("+{number}")
                    } else {
                        number.to_string()
                    }
                }
                'x' | 'X' | 'o' | 'c' => {
                    let number = value
                        .as_int()
                        .map_err(|_| format!("expected an integer, found \"{text}\""))?;
                    match conversion {
                        'x' => format!("{number:x}"),
                        'X' => format!("{number:X}"),
                        'o' => format!("{number:o}"),
                        _ => u32::try_from(number)
                            .ok()
                            .and_then(char::from_u32)
                            .map(String::from)
                            .unwrap_or_default(),
                    }
                }
                'f' | 'e' | 'g' | 'E' | 'G' => {
                    let number = value
                        .as_float()
                        .map_err(|_| format!("expected a number, found \"{text}\""))?;
                    let precision = precision.unwrap_or(6);
                    let formatted = match conversion {
                        'f' => format!("{number:.precision$}"),
                        'e' => format!("{number:.precision$e}"),
                        'E' => format!("{number:.precision$E}"),
                        _ => format!("{number}"),
                    };
                    if flags.contains('+') && number >= 0.0 {
                        format!("+{formatted}")
                    } else {
                        formatted
                    }
                }
                other => return Err(format!("format conversion %{other} is not supported")),
            };
            let width: usize = width.parse().unwrap_or(0);
            let padding = width.saturating_sub(body.chars().count());
            if flags.contains('-') {
                out.push_str(&body);
                out.push_str(&" ".repeat(padding));
            } else if flags.contains('0') && conversion != 's' {
                let (sign, digits) = match body.strip_prefix(['-', '+']) {
                    Some(rest) => (&body[..1], rest),
                    None => ("", body.as_str()),
                };
                out.push_str(sign);
                out.push_str(&"0".repeat(padding));
                out.push_str(digits);
            } else {
                out.push_str(&" ".repeat(padding));
                out.push_str(&body);
            }
        }
        Ok(Value::from(out))
    })
}

/// `lsort [-increasing|-decreasing] [-unique] [-ascii|-dictionary|-integer|-real] list`.
pub fn lsort<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |_, words| {
        const OPTIONS: &[OptionSpec] = &[
            flag("-increasing"),
            flag("-decreasing"),
            flag("-unique"),
            flag("-ascii"),
            flag("-dictionary"),
            flag("-integer"),
            flag("-real"),
        ];
        let arguments = Arguments::parse(words, OPTIONS)?;
        arguments.expect_positionals(1, 1, "a list")?;
        let mut elements = list(arguments.positionals[0])?;
        let numeric = arguments.has("-integer") || arguments.has("-real");
        if numeric {
            let mut keyed = Vec::with_capacity(elements.len());
            for element in elements {
                let key: f64 = element
                    .trim()
                    .parse()
                    .map_err(|_| format!("expected a number, found \"{element}\""))?;
                keyed.push((key, element));
            }
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            elements = keyed.into_iter().map(|(_, element)| element).collect();
        } else {
            elements.sort();
        }
        if arguments.has("-unique") {
            elements.dedup();
        }
        if arguments.has("-decreasing") {
            elements.reverse();
        }
        Ok(Value::from(
            elements
                .into_iter()
                .map(Value::from)
                .collect::<Vec<Value>>(),
        ))
    })
}

/// `lsearch [-exact|-glob] [-all] list pattern`.
pub fn lsearch<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    run(interp, argv, |_, words| {
        const OPTIONS: &[OptionSpec] = &[flag("-exact"), flag("-glob"), flag("-all")];
        let arguments = Arguments::parse(words, OPTIONS)?;
        arguments.expect_positionals(2, 2, "a list and a pattern")?;
        let elements = list(arguments.positionals[0])?;
        let pattern = arguments.positionals[1].as_str();
        let found = |element: &String| {
            if arguments.has("-exact") {
                element == pattern
            } else {
                matches(pattern, element, true)
            }
        };
        if arguments.has("-all") {
            let indices: Vec<Value> = elements
                .iter()
                .enumerate()
                .filter(|(_, element)| found(element))
                .map(|(index, _)| Value::from(index as i64))
                .collect();
            return Ok(Value::from(indices));
        }
        Ok(Value::from(
            elements
                .iter()
                .position(found)
                .map_or(-1, |index| index as i64),
        ))
    })
}
