//! SDC bound to the design: the names SDC queries ([`tachyon_sdc::DesignView`] for
//! [`Design`]), the graph edits constraints make (case analysis and disabled timing
//! leave arcs and tests out; loads, input transitions and driving cells set port values),
//! and the [`Constraints`] of the OpenSTA-convention search, resolved to the graph's
//! pins.
//!
//! SDC names pins `instance/pin`; the graph `instance:pin`.

use std::collections::{HashMap, HashSet};

use tachyon_graph::{ArcId, ArcKind, Assertions, PinId, PinKind, TimingGraph};
use tachyon_kernels::{Split, Transition};
use tachyon_sdc::{
    DesignView, Object, ObjectKind, PortDirection as SdcDirection, SdcCommand, SdcUnits,
};
use tachyon_sta::{Clock, ClockEdge, ClockId, Constraints, Exception, ExceptionKind, PortDelay};

use crate::design::Design;
use crate::library::{LibraryCell, PinDirection};
use crate::logic;
use crate::LinkError;

impl DesignView for Design {
    fn design_name(&self) -> String {
        self.design_name.clone()
    }

    fn library_units(&self) -> Option<SdcUnits> {
        self.library_units
    }

    fn port(&self, name: &str) -> Option<SdcDirection> {
        let port = self.port_by_name(name)?;
        Some(match port.kind {
            PinKind::PrimaryInput => SdcDirection::Input,
            _ => SdcDirection::Output,
        })
    }

    fn ports(&self) -> Vec<(String, SdcDirection)> {
        let mut seen = HashSet::new();
        self.ports
            .iter()
            .filter(|port| seen.insert(port.name.as_str()))
            .map(|port| {
                let direction = match port.kind {
                    PinKind::PrimaryInput => SdcDirection::Input,
                    _ => SdcDirection::Output,
                };
                (port.name.clone(), direction)
            })
            .collect()
    }

    fn instance_cell(&self, name: &str) -> Option<String> {
        let slot = self.instances.get(name)?;
        let instance = &self.instances.slots[slot as usize];
        instance
            .alive
            .then(|| self.cells.names[instance.cell as usize].clone())
    }

    fn for_each_instance(&self, visit: &mut dyn FnMut(&str, &str)) {
        for instance in self
            .instances
            .slots
            .iter()
            .filter(|instance| instance.alive)
        {
            visit(&instance.name, &self.cells.names[instance.cell as usize]);
        }
    }

    fn cell_pins(&self, cell: &str) -> Option<Vec<(String, SdcDirection)>> {
        let cell = self.library_cell(cell)?;
        Some(
            cell.pins
                .iter()
                .map(|pin| {
                    let direction = match pin.direction {
                        PinDirection::Input => SdcDirection::Input,
                        PinDirection::Output => SdcDirection::Output,
                    };
                    (pin.name.clone(), direction)
                })
                .collect(),
        )
    }

    fn has_net(&self, name: &str) -> bool {
        self.nets
            .get(name)
            .is_some_and(|slot| self.nets.slots[slot as usize].alive)
    }

    fn for_each_net(&self, visit: &mut dyn FnMut(&str)) {
        for net in self.nets.slots.iter().filter(|net| net.alive) {
            visit(&net.name);
        }
    }

    fn library_cells(&self) -> Vec<String> {
        let mut cells: Vec<String> = self
            .libraries
            .iter()
            .flatten()
            .flat_map(|library| library.cells().map(|cell| cell.name.clone()))
            .collect();
        cells.sort();
        cells.dedup();
        cells
    }
}

/// An SDC resolution error at a command's location.
fn error(command: &SdcCommand, message: impl Into<String>) -> LinkError {
    LinkError::Sdc {
        location: command.location().to_string(),
        command: command.name().to_string(),
        message: message.into(),
    }
}

/// The graph pin of a port or `instance/pin` object.
fn pin_of(graph: &TimingGraph, object: &Object) -> Option<PinId> {
    match object.kind {
        ObjectKind::Port => graph.pin_by_name(&object.name),
        ObjectKind::Pin => {
            let (instance, pin) = object.name.rsplit_once('/')?;
            graph.pin_by_name(&format!("{instance}:{pin}"))
        }
        _ => None,
    }
}

/// Per condition: a value set for the conditions of `mask`.
fn set_conditions(values: &mut [f64; 4], mask: tachyon_sdc::ConditionMask, value: f64) {
    for (condition, slot) in values.iter_mut().enumerate() {
        if mask.contains_index(condition) {
            *slot = value;
        }
    }
}

/// What the SDC does to the graph, resolved once per build.
#[derive(Debug, Default)]
pub(crate) struct GraphEdits {
    /// Pins held constant, with their values (propagated through the logic).
    pub(crate) constants: HashMap<PinId, bool>,
    /// Arcs left out.
    pub(crate) disabled_arcs: Vec<ArcId>,
    /// Instances whose tests are left out (`set_disable_timing` on an instance), with
    /// the `-from`/`-to` pin names when given.
    pub(crate) disabled_tests: Vec<(String, Option<String>, Option<String>)>,
    /// Register clock pins an ideal clock reaches: (pin, clock, inverted on the way).
    pub(crate) ideal_clock_pins: Vec<(PinId, ClockId, bool)>,
    /// Per clock, its ideal transition per condition.
    pub(crate) ideal_clock_transitions: Vec<[f64; 4]>,
}

impl Design {
    /// Sets the SDC commands the design is timed with (OpenSTA's conventions),
    /// replacing any before.
    pub fn set_sdc_commands(&mut self, commands: Vec<SdcCommand>) {
        self.sdc_commands = commands;
        self.uses_sdc = true;
    }

    /// Adds SDC commands after those read before (as `read_sdc` twice, or commands typed
    /// in a shell after it).
    pub fn add_sdc_commands(&mut self, commands: Vec<SdcCommand>) {
        self.sdc_commands.extend(commands);
        self.uses_sdc = true;
    }

    /// The SDC commands the design is timed with.
    pub fn sdc_commands(&self) -> &[SdcCommand] {
        &self.sdc_commands
    }

    /// Whether the design is timed with SDC constraints (OpenSTA's conventions) rather
    /// than TAU 2015 assertions.
    pub fn uses_sdc(&self) -> bool {
        self.uses_sdc
    }

    /// Times the design with SDC constraints from now on (none yet: every input arrives
    /// unclocked at 0).
    pub fn use_sdc(&mut self) {
        self.uses_sdc = true;
    }

    /// The graph pins of an instance's library pins (named `instance:pin`).
    fn instance_pins(&self, graph: &TimingGraph, instance: &str) -> Vec<(String, PinId)> {
        let Some(cell) = DesignView::instance_cell(self, instance) else {
            return Vec::new();
        };
        let Some(cell) = self.library_cell(&cell) else {
            return Vec::new();
        };
        cell.pins
            .iter()
            .filter_map(|pin| {
                graph
                    .pin_by_name(&format!("{instance}:{}", pin.name))
                    .map(|id| (pin.name.clone(), id))
            })
            .collect()
    }

    /// The graph pins of instance `instance` that `keep` accepts.
    fn instance_pins_where(
        &self,
        graph: &TimingGraph,
        instance: &str,
        keep: impl Fn(PinId) -> bool,
    ) -> Vec<PinId> {
        self.instance_pins(graph, instance)
            .into_iter()
            .map(|(_, pin)| pin)
            .filter(|&pin| keep(pin))
            .collect()
    }

    /// Case analysis and disabled timing, resolved against `graph` (whose arcs and tests
    /// are built): the arcs to leave out and the constant pins.
    pub(crate) fn graph_edits(&self, graph: &TimingGraph) -> Result<GraphEdits, LinkError> {
        let mut edits = GraphEdits::default();
        let mut disabled_pins: HashSet<PinId> = HashSet::new();
        let mut disabled_instances: Vec<(String, Option<String>, Option<String>)> = Vec::new();
        let mut disabled_cells: Vec<(String, Option<String>, Option<String>)> = Vec::new();
        for command in &self.sdc_commands {
            match command {
                SdcCommand::SetCaseAnalysis(case) => {
                    for object in &case.objects {
                        let pin = pin_of(graph, object)
                            .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                        edits.constants.insert(pin, case.value);
                    }
                }
                SdcCommand::SetDisableTiming(disable) => {
                    for object in &disable.objects {
                        match object.kind {
                            ObjectKind::Port | ObjectKind::Pin => {
                                let pin = pin_of(graph, object).ok_or_else(|| {
                                    error(command, format!("no {object} in the design"))
                                })?;
                                disabled_pins.insert(pin);
                            }
                            ObjectKind::Instance => disabled_instances.push((
                                object.name.clone(),
                                disable.from.clone(),
                                disable.to.clone(),
                            )),
                            ObjectKind::LibCell => disabled_cells.push((
                                object.name.clone(),
                                disable.from.clone(),
                                disable.to.clone(),
                            )),
                            _ => return Err(error(command, format!("cannot disable {object}"))),
                        }
                    }
                }
                _ => {}
            }
        }
        // Instances of disabled library cells.
        if !disabled_cells.is_empty() {
            for instance in self
                .instances
                .slots
                .iter()
                .filter(|instance| instance.alive)
            {
                let cell = &self.cells.names[instance.cell as usize];
                for (disabled, from, to) in &disabled_cells {
                    if disabled == cell {
                        disabled_instances.push((
                            instance.name.to_string(),
                            from.clone(),
                            to.clone(),
                        ));
                    }
                }
            }
        }
        self.propagate_constants(graph, &mut edits.constants);
        let by_pin: HashMap<PinId, (String, String)> = {
            let mut map = HashMap::new();
            for (instance, _, _) in &disabled_instances {
                for (pin, id) in self.instance_pins(graph, instance) {
                    map.insert(id, (instance.clone(), pin));
                }
            }
            map
        };
        for (index, arc) in graph.arcs().iter().enumerate() {
            let id = ArcId(index as u32);
            if disabled_pins.contains(&arc.from) || disabled_pins.contains(&arc.to) {
                edits.disabled_arcs.push(id);
                continue;
            }
            if edits.constants.contains_key(&arc.from) || edits.constants.contains_key(&arc.to) {
                edits.disabled_arcs.push(id);
                continue;
            }
            let ArcKind::Cell(_) = arc.kind else {
                continue;
            };
            if let (Some((instance, from_pin)), Some((_, to_pin))) =
                (by_pin.get(&arc.from), by_pin.get(&arc.to))
            {
                let disabled = disabled_instances.iter().any(|(name, from, to)| {
                    name == instance
                        && from.as_ref().is_none_or(|from| from == from_pin)
                        && to.as_ref().is_none_or(|to| to == to_pin)
                });
                if disabled {
                    edits.disabled_arcs.push(id);
                    continue;
                }
            }
            if !edits.constants.is_empty()
                && self.arc_blocked_by_constants(graph, arc, &edits.constants)
            {
                edits.disabled_arcs.push(id);
            }
        }
        edits.disabled_tests = disabled_instances;
        self.cut_ideal_clocks(graph, &mut edits)?;
        Ok(edits)
    }

    /// Ideal clocks: the register clock pins they reach get the clock's ideal arrival and
    /// transition (OpenSTA's ideal clocks), so the clock network's net arcs into those
    /// pins are cut and the pins seeded instead. Each reached pin is listed with the
    /// clock and whether the network inverts it there.
    fn cut_ideal_clocks(
        &self,
        graph: &TimingGraph,
        edits: &mut GraphEdits,
    ) -> Result<(), LinkError> {
        // The clocks alone (the graph is not finalized yet: exceptions resolve later).
        let mut resolver = Resolver::default();
        for command in &self.sdc_commands {
            if matches!(
                command,
                SdcCommand::CreateClock(_)
                    | SdcCommand::SetPropagatedClock { .. }
                    | SdcCommand::SetClockTransition(_)
                    | SdcCommand::SetClockLatency(_)
            ) {
                resolver.command(self, graph, command)?;
            }
        }
        let clocks = resolver.clocks;
        if clocks
            .iter()
            .all(|clock| clock.propagated || clock.sources.is_empty())
        {
            return Ok(());
        }
        let register_clock = tachyon_sta::register_clock_pins(graph);
        let disabled: HashSet<ArcId> = edits.disabled_arcs.iter().copied().collect();
        let mut fanout: HashMap<PinId, Vec<ArcId>> = HashMap::new();
        for (index, arc) in graph.arcs().iter().enumerate() {
            let id = ArcId(index as u32);
            if !disabled.contains(&id) {
                fanout.entry(arc.from).or_default().push(id);
            }
        }
        // Per register clock pin: (clock, inverted, propagated) of every clock reaching
        // it, and the arcs that reach it.
        let mut reached: HashMap<PinId, Vec<(usize, bool, bool)>> = HashMap::new();
        let mut arcs_in: HashMap<PinId, Vec<ArcId>> = HashMap::new();
        for (index, clock) in clocks.iter().enumerate() {
            let mut seen: HashSet<(PinId, bool)> = HashSet::new();
            let mut queue: Vec<(PinId, bool)> =
                clock.sources.iter().map(|&pin| (pin, false)).collect();
            while let Some((pin, inverted)) = queue.pop() {
                if !seen.insert((pin, inverted)) {
                    continue;
                }
                if register_clock[pin.index()] {
                    reached
                        .entry(pin)
                        .or_default()
                        .push((index, inverted, clock.propagated));
                    continue;
                }
                for &arc_id in fanout.get(&pin).map_or(&[][..], Vec::as_slice) {
                    let arc = graph.arc(arc_id);
                    if register_clock[arc.to.index()] {
                        arcs_in.entry(arc.to).or_default().push(arc_id);
                    }
                    match &arc.kind {
                        ArcKind::Net { .. } => queue.push((arc.to, inverted)),
                        ArcKind::Cell(cell) if cell.clock_edge.is_none() => match cell.unateness {
                            tachyon_graph::Unateness::Positive => queue.push((arc.to, inverted)),
                            tachyon_graph::Unateness::Negative => queue.push((arc.to, !inverted)),
                            tachyon_graph::Unateness::NonUnate => {
                                queue.push((arc.to, inverted));
                                queue.push((arc.to, !inverted));
                            }
                        },
                        ArcKind::Cell(_) => {}
                    }
                }
            }
        }
        let mut pins: Vec<PinId> = reached.keys().copied().collect();
        pins.sort();
        for pin in pins {
            let clocks_here = &reached[&pin];
            let ideal = clocks_here
                .iter()
                .filter(|(_, _, propagated)| !propagated)
                .count();
            if ideal == 0 {
                continue;
            }
            if ideal != clocks_here.len() {
                return Err(LinkError::Unsupported(format!(
                    "clock pin {} is reached by ideal and propagated clocks alike",
                    graph.pin(pin).name
                )));
            }
            for &(clock, inverted, _) in clocks_here {
                edits
                    .ideal_clock_pins
                    .push((pin, ClockId(clock as u32), inverted));
            }
            let mut cut = arcs_in.remove(&pin).unwrap_or_default();
            cut.sort();
            cut.dedup();
            edits.disabled_arcs.extend(cut);
        }
        edits.ideal_clock_transitions = clocks.iter().map(|clock| clock.transition).collect();
        Ok(())
    }

    /// The library cell of the instance a graph pin `instance:pin` belongs to, with the
    /// instance and pin names.
    fn cell_of_pin<'d>(
        &'d self,
        graph: &TimingGraph,
        pin: PinId,
    ) -> Option<(&'d str, &'d LibraryCell, String)> {
        let name = &graph.pin(pin).name;
        let (instance, pin_name) = name.rsplit_once(':')?;
        let slot = self.instances.get(instance)?;
        let instance_state = &self.instances.slots[slot as usize];
        let cell = self.library_cell(&self.cells.names[instance_state.cell as usize])?;
        Some((&instance_state.name, cell, pin_name.to_string()))
    }

    /// Whether case-analysis constants block a cell arc: its output no longer depends
    /// on its input, or its `when` condition is false.
    fn arc_blocked_by_constants(
        &self,
        graph: &TimingGraph,
        arc: &tachyon_graph::Arc,
        constants: &HashMap<PinId, bool>,
    ) -> bool {
        let Some((instance, cell, from_pin)) = self.cell_of_pin(graph, arc.from) else {
            return false;
        };
        let Some((_, _, to_pin)) = self.cell_of_pin(graph, arc.to) else {
            return false;
        };
        let known = |pin: &str| {
            graph
                .pin_by_name(&format!("{instance}:{pin}"))
                .and_then(|id| constants.get(&id).copied())
        };
        let to_index = cell.pin_index(&to_pin);
        let function = to_index.and_then(|index| cell.pins[index as usize].function.as_deref());
        if let Some(expression) = function.and_then(logic::parse) {
            let mut inputs = Vec::new();
            expression.pins(&mut inputs);
            // Only functions of the cell's own input pins (not of state such as IQ).
            let combinational = inputs.iter().all(|pin| {
                cell.pin_index(pin)
                    .is_some_and(|index| cell.pins[index as usize].direction == PinDirection::Input)
            });
            if combinational
                && inputs.contains(&from_pin)
                && !expression.depends_on(&from_pin, &known)
            {
                return true;
            }
        }
        // A `when` condition made false by the constants.
        let ArcKind::Cell(_) = arc.kind else {
            return false;
        };
        let from_index = cell.pin_index(&from_pin);
        cell.arcs.iter().any(|library_arc| {
            Some(library_arc.from) == from_index
                && Some(library_arc.to) == to_index
                && library_arc
                    .when
                    .as_deref()
                    .and_then(logic::parse)
                    .and_then(|when| when.constant_value(&known))
                    == Some(false)
                && cell
                    .arcs
                    .iter()
                    .filter(|other| Some(other.from) == from_index && Some(other.to) == to_index)
                    .all(|other| {
                        other
                            .when
                            .as_deref()
                            .and_then(logic::parse)
                            .and_then(|when| when.constant_value(&known))
                            == Some(false)
                    })
        })
    }

    /// Spreads constants through nets (a constant driver makes its sinks constant) and
    /// through cells whose output function the constants decide.
    fn propagate_constants(&self, graph: &TimingGraph, constants: &mut HashMap<PinId, bool>) {
        let mut queue: Vec<PinId> = constants.keys().copied().collect();
        let mut visited_instances: HashSet<String> = HashSet::new();
        let mut rounds = 0usize;
        while let Some(pin) = queue.pop() {
            rounds += 1;
            if rounds > 4 * graph.n_pins() as usize + 16 {
                break;
            }
            let Some(&value) = constants.get(&pin) else {
                continue;
            };
            // Through the net.
            if let Some(net) = graph.pin(pin).net {
                let net = graph.net(net);
                if net.driver == Some(pin) {
                    for &sink in &net.sinks {
                        if constants.insert(sink, value).is_none() {
                            queue.push(sink);
                        }
                    }
                }
            }
            // Through the cell: evaluate its outputs.
            let Some((instance, cell, _)) = self.cell_of_pin(graph, pin) else {
                continue;
            };
            let instance = instance.to_string();
            visited_instances.insert(instance.clone());
            for library_pin in &cell.pins {
                if library_pin.direction != PinDirection::Output {
                    continue;
                }
                let Some(output) = graph.pin_by_name(&format!("{instance}:{}", library_pin.name))
                else {
                    continue;
                };
                if constants.contains_key(&output) {
                    continue;
                }
                let Some(expression) = library_pin.function.as_deref().and_then(logic::parse)
                else {
                    continue;
                };
                let known = |name: &str| {
                    graph
                        .pin_by_name(&format!("{instance}:{name}"))
                        .and_then(|id| constants.get(&id).copied())
                };
                if let Some(value) = expression.constant_value(&known) {
                    constants.insert(output, value);
                    queue.push(output);
                }
            }
        }
    }

    /// The edits of the SDC applied to a graph under construction: arcs and tests left
    /// out, port loads, and the search seeds of the delay calculation (every input gets
    /// an arrival, its slew from `set_input_transition`, a driving cell, or 0).
    pub(crate) fn apply_sdc_to_graph(&self, graph: &mut TimingGraph) -> Result<(), LinkError> {
        let edits = self.graph_edits(graph)?;
        graph.disable_arcs(&edits.disabled_arcs);
        if !edits.disabled_tests.is_empty() || !edits.constants.is_empty() {
            let names: Vec<String> = graph.pins().iter().map(|pin| pin.name.clone()).collect();
            let constants = &edits.constants;
            let disabled = &edits.disabled_tests;
            graph.retain_tests(|test| {
                if constants.contains_key(&test.clock) || constants.contains_key(&test.data) {
                    return false;
                }
                let (Some((instance, clock)), Some((_, data))) = (
                    names[test.clock.index()].rsplit_once(':'),
                    names[test.data.index()].rsplit_once(':'),
                ) else {
                    return true;
                };
                !disabled.iter().any(|(name, from, to)| {
                    name == instance
                        && from.as_deref().is_none_or(|from| from == clock)
                        && to.as_deref().is_none_or(|to| to == data)
                })
            });
        }
        // Port loads.
        let mut loads: HashMap<PinId, [f64; 4]> = HashMap::new();
        let mut slews: HashMap<PinId, [f64; 4]> = HashMap::new();
        for command in &self.sdc_commands {
            match command {
                SdcCommand::SetLoad(load) => {
                    for object in &load.objects {
                        let pin = pin_of(graph, object)
                            .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                        set_conditions(
                            loads.entry(pin).or_insert([0.0; 4]),
                            load.conditions,
                            load.capacitance,
                        );
                    }
                }
                SdcCommand::SetInputTransition(transition) => {
                    for object in &transition.objects {
                        let pin = pin_of(graph, object)
                            .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                        set_conditions(
                            slews.entry(pin).or_insert([0.0; 4]),
                            transition.conditions,
                            transition.transition,
                        );
                    }
                }
                _ => {}
            }
        }
        for (&pin, load) in &loads {
            if graph.pin(pin).kind == PinKind::PrimaryOutput {
                graph.pin_mut(pin).capacitance = *load;
            }
        }
        // Driving cells: their output slew at the port's load.
        for (pin, drive) in self.driving_cells(graph, &loads)? {
            slews.insert(pin, drive.slew);
        }
        let mut assertions = Assertions::default();
        for (index, pin) in graph.pins().iter().enumerate() {
            let id = PinId(index as u32);
            if pin.kind != PinKind::PrimaryInput || edits.constants.contains_key(&id) {
                continue;
            }
            assertions.arrival.push((id, [0.0; 4]));
            assertions
                .slew
                .push((id, slews.get(&id).copied().unwrap_or([0.0; 4])));
        }
        // Register clock pins of ideal clocks: cut from their network, seeded with the
        // clock's transition (the worst of the clocks reaching them).
        let mut ideal: HashMap<PinId, [f64; 4]> = HashMap::new();
        for &(pin, clock, _) in &edits.ideal_clock_pins {
            let transition = edits.ideal_clock_transitions[clock.index()];
            let slot = ideal.entry(pin).or_insert(transition);
            for (condition, value) in slot.iter_mut().enumerate() {
                *value = if condition < 2 {
                    value.min(transition[condition])
                } else {
                    value.max(transition[condition])
                };
            }
        }
        let mut ideal: Vec<(PinId, [f64; 4])> = ideal.into_iter().collect();
        ideal.sort_by_key(|(pin, _)| *pin);
        for (pin, transition) in ideal {
            assertions.arrival.push((pin, [0.0; 4]));
            assertions.slew.push((pin, transition));
        }
        graph.set_assertions(assertions);
        Ok(())
    }

    /// Per port with a driving cell, the cell's output slew and delay at the port's load
    /// (the port net's pin and wire capacitance, plus any `set_load` on the port).
    fn driving_cells(
        &self,
        graph: &TimingGraph,
        loads: &HashMap<PinId, [f64; 4]>,
    ) -> Result<Vec<(PinId, Drive)>, LinkError> {
        let mut drives: HashMap<PinId, Drive> = HashMap::new();
        for command in &self.sdc_commands {
            let SdcCommand::SetDrivingCell(driving) = command else {
                continue;
            };
            for object in &driving.objects {
                let pin = pin_of(graph, object)
                    .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                let load = port_load(graph, pin, loads.get(&pin).copied().unwrap_or([0.0; 4]));
                let entry = drives.entry(pin).or_insert(Drive {
                    slew: [0.0; 4],
                    delay: [0.0; 4],
                });
                for split in Split::BOTH {
                    let Some(cell) = self.libraries[split.index()]
                        .as_ref()
                        .and_then(|library| library.cell(&driving.cell))
                    else {
                        return Err(error(command, format!("no library cell {}", driving.cell)));
                    };
                    let output = match &driving.pin {
                        Some(name) => cell.pin_index(name),
                        None => {
                            let outputs: Vec<u32> = (0..cell.pins.len() as u32)
                                .filter(|&index| {
                                    cell.pins[index as usize].direction == PinDirection::Output
                                })
                                .collect();
                            match outputs[..] {
                                [only] => Some(only),
                                _ => {
                                    return Err(error(
                                        command,
                                        format!(
                                            "{} has several outputs: name one with -pin",
                                            driving.cell
                                        ),
                                    ))
                                }
                            }
                        }
                    }
                    .ok_or_else(|| error(command, "no such output pin"))?;
                    let from = match &driving.from_pin {
                        Some(name) => Some(
                            cell.pin_index(name)
                                .ok_or_else(|| error(command, "no such input pin"))?,
                        ),
                        None => None,
                    };
                    for output_transition in Transition::BOTH {
                        let condition = split.index() * 2 + output_transition.index();
                        if !driving.conditions.contains_index(condition) {
                            continue;
                        }
                        let (mut delay, mut slew) = (f64::NAN, f64::NAN);
                        for arc in &cell.arcs {
                            if arc.to != output
                                || from.is_some_and(|from| from != arc.from)
                                || arc.clock_edge.is_some()
                            {
                                continue;
                            }
                            let (Some(delay_table), Some(slew_table)) = (
                                arc.delay[output_transition.index()],
                                arc.slew[output_transition.index()],
                            ) else {
                                continue;
                            };
                            for input in Transition::BOTH {
                                if !arc.unateness.allows(input, output_transition) {
                                    continue;
                                }
                                let input_slew = driving.input_transition[input.index()];
                                let arc_delay =
                                    graph.table(delay_table).lookup(input_slew, load[condition]);
                                let arc_slew =
                                    graph.table(slew_table).lookup(input_slew, load[condition]);
                                let worse = |current: f64, candidate: f64| {
                                    if current.is_nan()
                                        || (split == Split::Late && candidate > current)
                                        || (split == Split::Early && candidate < current)
                                    {
                                        candidate
                                    } else {
                                        current
                                    }
                                };
                                delay = worse(delay, arc_delay);
                                slew = worse(slew, arc_slew);
                            }
                        }
                        if delay.is_nan() {
                            return Err(error(
                                command,
                                format!(
                                    "{} has no delay arc to its output for this transition",
                                    driving.cell
                                ),
                            ));
                        }
                        entry.delay[condition] = delay;
                        entry.slew[condition] = slew;
                    }
                }
            }
        }
        let mut drives: Vec<(PinId, Drive)> = drives.into_iter().collect();
        drives.sort_by_key(|(pin, _)| *pin);
        Ok(drives)
    }

    /// The constraints of the OpenSTA-convention search, resolved against `graph`.
    pub fn constraints(&self, graph: &TimingGraph) -> Result<Constraints, LinkError> {
        let mut resolver = Resolver::default();
        for command in &self.sdc_commands {
            resolver.command(self, graph, command)?;
        }
        let mut constraints = resolver.finish()?;
        let edits = self.graph_edits(graph)?;
        let mut constants: Vec<(PinId, bool)> = edits.constants.into_iter().collect();
        constants.sort();
        constraints.constant_pins = constants;
        constraints.ideal_clock_pins = edits.ideal_clock_pins;
        let mut loads: HashMap<PinId, [f64; 4]> = HashMap::new();
        for command in &self.sdc_commands {
            if let SdcCommand::SetLoad(load) = command {
                for object in &load.objects {
                    if let Some(pin) = pin_of(graph, object) {
                        set_conditions(
                            loads.entry(pin).or_insert([0.0; 4]),
                            load.conditions,
                            load.capacitance,
                        );
                    }
                }
            }
        }
        constraints.input_drive_delay = self
            .driving_cells(graph, &loads)?
            .into_iter()
            .map(|(pin, drive)| (pin, drive.delay))
            .collect();
        Ok(constraints)
    }
}

/// A driving cell's effect on its port.
#[derive(Debug, Clone, Copy)]
struct Drive {
    slew: [f64; 4],
    delay: [f64; 4],
}

/// The load a port's net puts on it: its sinks' pin capacitance and its wire
/// capacitance (from its RC tree), plus `extra`.
fn port_load(graph: &TimingGraph, pin: PinId, extra: [f64; 4]) -> [f64; 4] {
    let mut load = extra;
    let Some(net) = graph.pin(pin).net else {
        return load;
    };
    let net = graph.net(net);
    for &sink in &net.sinks {
        for (condition, value) in load.iter_mut().enumerate() {
            *value += graph.pin(sink).capacitance[condition];
        }
    }
    if let Some(tree) = graph.rc_tree(net) {
        let wire: f64 = tree.ground_capacitance.iter().sum();
        for value in &mut load {
            *value += wire;
        }
    }
    load
}

/// Builds [`Constraints`] command by command.
#[derive(Default)]
struct Resolver {
    /// Clocks by name, in definition order: (definition, propagated, latencies...).
    clocks: Vec<Clock>,
    clock_index: HashMap<String, usize>,
    /// Where each clock was defined, for messages.
    clock_location: Vec<String>,
    /// Per port, its delays per clock edge (input, output).
    input_delays: Vec<PortDelay>,
    output_delays: Vec<PortDelay>,
    exceptions: Vec<(Exception, Vec<String>, Vec<String>)>,
    pair_uncertainty: Vec<(String, String, [f64; 2], [bool; 2])>,
    groups: Vec<Vec<Vec<String>>>,
    derates: tachyon_sta::Derates,
}

impl Resolver {
    fn command(
        &mut self,
        design: &Design,
        graph: &TimingGraph,
        command: &SdcCommand,
    ) -> Result<(), LinkError> {
        match command {
            SdcCommand::CreateClock(created) => {
                let mut sources = Vec::new();
                for object in &created.sources {
                    let pin = pin_of(graph, object)
                        .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                    sources.push(pin);
                }
                if !created.add {
                    // A clock defined on a source takes it from the clocks there before.
                    for clock in &mut self.clocks {
                        if clock.name != created.name {
                            clock.sources.retain(|pin| !sources.contains(pin));
                        }
                    }
                }
                let clock = Clock {
                    name: created.name.clone(),
                    period: created.period,
                    waveform: created.waveform,
                    sources,
                    propagated: false,
                    source_latency: [0.0; 4],
                    network_latency: [0.0; 4],
                    transition: [0.0; 4],
                    uncertainty: [0.0; 2],
                };
                match self.clock_index.get(&created.name) {
                    Some(&index) => {
                        self.clocks[index] = clock;
                        self.clock_location[index] = command.location().to_string();
                    }
                    None => {
                        self.clock_index
                            .insert(created.name.clone(), self.clocks.len());
                        self.clocks.push(clock);
                        self.clock_location.push(command.location().to_string());
                    }
                }
            }
            SdcCommand::SetPropagatedClock { clocks, .. } => {
                for name in clocks {
                    let clock = self.clock_mut(command, name)?;
                    clock.propagated = true;
                }
            }
            SdcCommand::SetClockLatency(latency) => {
                for name in &latency.clocks {
                    let clock = self.clock_mut(command, name)?;
                    let values = if latency.source {
                        &mut clock.source_latency
                    } else {
                        &mut clock.network_latency
                    };
                    set_conditions(values, latency.conditions, latency.latency);
                }
            }
            SdcCommand::SetClockTransition(transition) => {
                for name in &transition.clocks {
                    let clock = self.clock_mut(command, name)?;
                    set_conditions(
                        &mut clock.transition,
                        transition.conditions,
                        transition.transition,
                    );
                }
            }
            SdcCommand::SetClockUncertainty(uncertainty) => {
                let checks = [uncertainty.checks.setup, uncertainty.checks.hold];
                for name in &uncertainty.clocks {
                    let clock = self.clock_mut(command, name)?;
                    for (slot, applies) in clock.uncertainty.iter_mut().zip(checks) {
                        if applies {
                            *slot = uncertainty.uncertainty;
                        }
                    }
                }
                if let Some((from, to)) = &uncertainty.between {
                    for launch in from {
                        for capture in to {
                            self.pair_uncertainty.push((
                                launch.clone(),
                                capture.clone(),
                                [uncertainty.uncertainty; 2],
                                checks,
                            ));
                        }
                    }
                }
            }
            SdcCommand::SetClockGroups(groups) => self.groups.push(groups.groups.clone()),
            SdcCommand::SetInputDelay(delay) | SdcCommand::SetOutputDelay(delay) => {
                let input = matches!(command, SdcCommand::SetInputDelay(_));
                let edge = match &delay.clock {
                    Some(name) => {
                        let clock = *self
                            .clock_index
                            .get(name)
                            .ok_or_else(|| error(command, format!("no clock {name}")))?;
                        Some(ClockEdge {
                            clock: ClockId(clock as u32),
                            transition: if delay.clock_fall {
                                Transition::Fall
                            } else {
                                Transition::Rise
                            },
                        })
                    }
                    None if input => None,
                    None => {
                        return Err(error(
                            command,
                            "an output delay without -clock is not supported (name the clock it is relative to)",
                        ))
                    }
                };
                for object in &delay.objects {
                    let pin = pin_of(graph, object)
                        .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                    let list = if input {
                        &mut self.input_delays
                    } else {
                        &mut self.output_delays
                    };
                    if !delay.add_delay {
                        // A delay without -add_delay replaces the port's earlier ones for
                        // the conditions it sets.
                        for other in list.iter_mut().filter(|other| other.pin == pin) {
                            for (condition, value) in other.values.iter_mut().enumerate() {
                                if delay.conditions.contains_index(condition) {
                                    *value = f64::NAN;
                                }
                            }
                        }
                    }
                    let entry = match list
                        .iter()
                        .position(|other| other.pin == pin && other.edge == edge)
                    {
                        Some(at) => &mut list[at],
                        None => {
                            list.push(PortDelay {
                                pin,
                                edge,
                                values: [f64::NAN; 4],
                                source_latency_included: delay.source_latency_included,
                                network_latency_included: delay.network_latency_included,
                            });
                            let last = list.len() - 1;
                            &mut list[last]
                        }
                    };
                    set_conditions(&mut entry.values, delay.conditions, delay.delay);
                    list.retain(|other| other.values.iter().any(|value| !value.is_nan()));
                }
            }
            SdcCommand::SetFalsePath(path) => {
                self.exception(design, graph, command, path, ExceptionKind::FalsePath)?
            }
            SdcCommand::SetMulticyclePath(multicycle) => self.exception(
                design,
                graph,
                command,
                &multicycle.path,
                ExceptionKind::Multicycle {
                    multiplier: multicycle.multiplier,
                    start: multicycle.start,
                },
            )?,
            SdcCommand::SetPathDelay(delay) => self.exception(
                design,
                graph,
                command,
                &delay.path,
                ExceptionKind::PathDelay {
                    max: delay.max,
                    delay: delay.delay,
                },
            )?,
            SdcCommand::SetTimingDerate(derate) => {
                for split in Split::BOTH {
                    let split_on = match split {
                        Split::Early => derate.early,
                        Split::Late => derate.late,
                    };
                    for (cell, cell_on) in [(false, derate.net_delay), (true, derate.cell_delay)] {
                        for (clock, clock_on) in [(false, derate.data), (true, derate.clock)] {
                            for transition in Transition::BOTH {
                                if split_on
                                    && cell_on
                                    && clock_on
                                    && derate.transitions[transition.index()]
                                {
                                    self.derates.factors[split.index()][usize::from(cell)]
                                        [usize::from(clock)][transition.index()] = derate.factor;
                                }
                            }
                        }
                    }
                }
            }
            // Applied to the graph, or nothing to resolve.
            SdcCommand::SetLoad(_)
            | SdcCommand::SetInputTransition(_)
            | SdcCommand::SetDrivingCell(_)
            | SdcCommand::SetDisableTiming(_)
            | SdcCommand::SetCaseAnalysis(_)
            | SdcCommand::SetUnits(_) => {}
        }
        Ok(())
    }

    fn clock_mut(&mut self, command: &SdcCommand, name: &str) -> Result<&mut Clock, LinkError> {
        match self.clock_index.get(name) {
            Some(&index) => Ok(&mut self.clocks[index]),
            None => Err(error(command, format!("no clock {name}"))),
        }
    }

    fn exception(
        &mut self,
        design: &Design,
        graph: &TimingGraph,
        command: &SdcCommand,
        path: &tachyon_sdc::PathException,
        kind: ExceptionKind,
    ) -> Result<(), LinkError> {
        let register_clock = tachyon_sta::register_clock_pins(graph);
        let mut checked: HashSet<PinId> = graph.tests().iter().map(|test| test.data).collect();
        checked.extend(
            (0..graph.n_pins())
                .map(PinId)
                .filter(|&pin| graph.pin(pin).kind == PinKind::PrimaryOutput),
        );
        let mut from_pins = Vec::new();
        let mut from_clocks = Vec::new();
        for object in &path.from {
            match object.kind {
                ObjectKind::Clock => from_clocks.push(object.name.clone()),
                ObjectKind::Instance => {
                    let pins = design.instance_pins_where(graph, &object.name, |pin| {
                        register_clock[pin.index()]
                    });
                    if pins.is_empty() {
                        return Err(error(
                            command,
                            format!("-from {object}: it has no register clock pin"),
                        ));
                    }
                    from_pins.extend(pins);
                }
                _ => {
                    let pin = pin_of(graph, object)
                        .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                    if graph.pin(pin).kind == PinKind::PrimaryInput || register_clock[pin.index()] {
                        from_pins.push(pin);
                    } else if graph.pin(pin).kind == PinKind::CellOutput {
                        // A register's output stands for the register (as in OpenSTA).
                        let instance = graph.pin(pin).name.rsplit_once(':').map_or("", |(i, _)| i);
                        let pins = design.instance_pins_where(graph, instance, |pin| {
                            register_clock[pin.index()]
                        });
                        if pins.is_empty() {
                            return Err(error(
                                command,
                                format!("-from {object} is not a path start point (an input or a register)"),
                            ));
                        }
                        from_pins.extend(pins);
                    } else {
                        return Err(error(
                            command,
                            format!("-from {object} is not a path start point (an input or a register clock pin)"),
                        ));
                    }
                }
            }
        }
        let mut to_pins = Vec::new();
        let mut to_clocks = Vec::new();
        for object in &path.to {
            match object.kind {
                ObjectKind::Clock => to_clocks.push(object.name.clone()),
                ObjectKind::Instance => {
                    let pins = design
                        .instance_pins_where(graph, &object.name, |pin| checked.contains(&pin));
                    if pins.is_empty() {
                        return Err(error(
                            command,
                            format!("-to {object}: it has no checked data pin"),
                        ));
                    }
                    to_pins.extend(pins);
                }
                _ => {
                    let pin = pin_of(graph, object)
                        .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                    if !checked.contains(&pin) && !graph.fanout(pin).is_empty() {
                        return Err(error(
                            command,
                            format!("-to {object} is not a path endpoint (an output or a register data pin)"),
                        ));
                    }
                    to_pins.push(pin);
                }
            }
        }
        let mut throughs = Vec::new();
        for set in &path.through {
            let mut pins = Vec::new();
            for object in set {
                match object.kind {
                    ObjectKind::Port | ObjectKind::Pin => pins.push(
                        pin_of(graph, object)
                            .ok_or_else(|| error(command, format!("no {object} in the design")))?,
                    ),
                    ObjectKind::Instance => {
                        pins.extend(design.instance_pins_where(graph, &object.name, |pin| {
                            graph.pin(pin).kind == PinKind::CellOutput
                        }))
                    }
                    ObjectKind::Net => {
                        let net = graph
                            .nets()
                            .iter()
                            .find(|net| net.name == object.name)
                            .ok_or_else(|| error(command, format!("no {object} in the design")))?;
                        pins.extend(net.driver);
                    }
                    _ => {
                        return Err(error(
                            command,
                            format!("-through {object} is not a pin, port, instance or net"),
                        ))
                    }
                }
            }
            pins.sort();
            pins.dedup();
            throughs.push(pins);
        }
        from_pins.sort();
        from_pins.dedup();
        to_pins.sort();
        to_pins.dedup();
        let exception = Exception {
            kind,
            setup: path.checks.setup,
            hold: path.checks.hold,
            from_pins,
            from_clocks: Vec::new(),
            throughs,
            to_pins,
            to_clocks: Vec::new(),
            end_transitions: path.end_transitions,
            location: command.location().to_string(),
        };
        self.exceptions.push((exception, from_clocks, to_clocks));
        Ok(())
    }

    /// The constraints, clock names resolved to ids.
    fn finish(self) -> Result<Constraints, LinkError> {
        let id_of = |name: &str| {
            self.clock_index
                .get(name)
                .map(|&index| ClockId(index as u32))
        };
        let missing = |name: &str, location: &str| LinkError::Sdc {
            location: location.to_string(),
            command: "clock".to_string(),
            message: format!("no clock {name}"),
        };
        let mut exceptions = Vec::with_capacity(self.exceptions.len());
        for (mut exception, from_clocks, to_clocks) in self.exceptions {
            for name in &from_clocks {
                exception
                    .from_clocks
                    .push(id_of(name).ok_or_else(|| missing(name, &exception.location))?);
            }
            for name in &to_clocks {
                exception
                    .to_clocks
                    .push(id_of(name).ok_or_else(|| missing(name, &exception.location))?);
            }
            exception.from_clocks.sort();
            exception.to_clocks.sort();
            exceptions.push(exception);
        }
        let mut pair_uncertainty = Vec::new();
        for (from, to, values, checks) in &self.pair_uncertainty {
            let (Some(from), Some(to)) = (id_of(from), id_of(to)) else {
                continue;
            };
            let mut value = self.clocks[to.index()].uncertainty;
            if let Some(&(_, _, earlier)) = pair_uncertainty
                .iter()
                .rev()
                .find(|(a, b, _): &&(ClockId, ClockId, [f64; 2])| *a == from && *b == to)
            {
                value = earlier;
            }
            for (slot, (applies, new)) in value.iter_mut().zip(checks.iter().zip(values)) {
                if *applies {
                    *slot = *new;
                }
            }
            pair_uncertainty.push((from, to, value));
        }
        let mut unrelated = Vec::new();
        let all: Vec<ClockId> = (0..self.clocks.len() as u32).map(ClockId).collect();
        for groups in &self.groups {
            let resolved: Vec<Vec<ClockId>> = groups
                .iter()
                .map(|group| group.iter().filter_map(|name| id_of(name)).collect())
                .collect();
            let resolved = if resolved.len() == 1 {
                // One group stands against every other clock.
                let others: Vec<ClockId> = all
                    .iter()
                    .copied()
                    .filter(|clock| !resolved[0].contains(clock))
                    .collect();
                vec![resolved[0].clone(), others]
            } else {
                resolved
            };
            for (first, group) in resolved.iter().enumerate() {
                for (second, other) in resolved.iter().enumerate() {
                    if first == second {
                        continue;
                    }
                    for &a in group {
                        for &b in other {
                            unrelated.push((a, b));
                        }
                    }
                }
            }
        }
        Ok(Constraints {
            clocks: self.clocks,
            input_delays: self.input_delays,
            output_delays: self.output_delays,
            exceptions,
            clock_pair_uncertainty: pair_uncertainty,
            unrelated_clocks: unrelated,
            derates: self.derates,
            constant_pins: Vec::new(),
            input_drive_delay: Vec::new(),
            ideal_clock_pins: Vec::new(),
        })
    }
}
