//! Liberty libraries bound for timing: per cell, its pins, delay arcs and tests, with
//! tables converted to ps/fF in a shared store.

use tachyon_graph::{FastMap, NldmTable, TableId, TestKind, Unateness};
use tachyon_kernels::Transition;
use tachyon_liberty as liberty;

/// Which Liberty `timing()` groups of a pin become arcs and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TimingGroupPolicy {
    /// Every group, even several with the same related pin (the timing model: hold and
    /// setup on one data pin in one library is common outside TAU).
    #[default]
    KeepAll,
    /// Only the last group per related pin. The TAU 2015 reference timer behaves like
    /// this: in `simple`, whose libraries each hold a `hold_rising` and then a
    /// `setup_rising` group on `DFF_X80:d`, its goldens show no hold check at all.
    LastPerRelatedPin,
}

/// Whether a cell pin drives or receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinDirection {
    /// Receives a signal (inputs and clock pins).
    Input,
    /// Drives a net (outputs; inout pins are treated as outputs).
    Output,
}

/// A cell pin.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryPin {
    /// The pin name.
    pub name: String,
    /// Input or output.
    pub direction: PinDirection,
    /// Capacitance per condition (fF; early-rise, early-fall, late-rise, late-fall): a
    /// `*_capacitance_range` gives its low end to the early (min) analysis and its high
    /// end to the late (max) one, as OpenSTA does.
    pub capacitance: [f64; 4],
    /// The Liberty `function` of an output, as written.
    pub function: Option<String>,
}

/// A delay arc of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryArc {
    /// Index of the related (input) pin.
    pub from: u32,
    /// Index of the output pin.
    pub to: u32,
    /// Unateness.
    pub unateness: Unateness,
    /// Launch edge for `rising_edge`/`falling_edge` arcs.
    pub clock_edge: Option<Transition>,
    /// Delay tables by output transition.
    pub delay: [Option<TableId>; 2],
    /// Slew tables by output transition.
    pub slew: [Option<TableId>; 2],
    /// The Liberty `when` condition, as written.
    pub when: Option<String>,
}

/// A timing check of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryTest {
    /// Index of the related (clock) pin.
    pub clock: u32,
    /// Index of the constrained (data) pin.
    pub data: u32,
    /// Setup or hold.
    pub kind: TestKind,
    /// The clock edge.
    pub clock_edge: Transition,
    /// Constraint tables by data transition.
    pub constraint: [Option<TableId>; 2],
}

/// A bound cell.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryCell {
    /// The cell name.
    pub name: String,
    /// Its pins.
    pub pins: Vec<LibraryPin>,
    /// Its delay arcs.
    pub arcs: Vec<LibraryArc>,
    /// Its timing checks.
    pub tests: Vec<LibraryTest>,
    pin_index: FastMap<String, u32>,
}

impl LibraryCell {
    /// The index of pin `name`.
    pub fn pin_index(&self, name: &str) -> Option<u32> {
        self.pin_index.get(name).copied()
    }
}

/// A library bound for one split: the cells of every Liberty file read for it, the
/// first file that defines a cell giving it (as OpenSTA links cells).
#[derive(Debug, Clone, Default)]
pub struct CellLibrary {
    cells: FastMap<String, LibraryCell>,
    /// Whether each cell came from a file read for this split alone (rather than for
    /// both splits): such a cell replaces one read for both.
    split_specific: FastMap<String, bool>,
}

/// What binding a library left out, for one warning per file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BindNotes {
    /// Per check type (`min_pulse_width`, ...), how many groups were not made into
    /// arcs or tests: these checks constrain no data path here and are not reported.
    pub skipped_checks: Vec<(&'static str, usize)>,
    /// Timing groups whose related pin the cell does not have.
    pub unknown_related_pins: Vec<String>,
}

impl CellLibrary {
    /// Binds `library` (its groups chosen by `policy`), appending its tables (in ps and
    /// fF) to `tables`. Only delay-arc groups become arcs and only setup/hold-like groups
    /// tests; other checks (`min_pulse_width`, ...) are counted in the notes.
    pub fn bind(
        library: &liberty::Library,
        tables: &mut Vec<NldmTable>,
        policy: TimingGroupPolicy,
    ) -> (CellLibrary, BindNotes) {
        let units = library.units;
        let mut cells = FastMap::default();
        let mut notes = BindNotes::default();
        let mut skipped: FastMap<&'static str, usize> = FastMap::default();
        for cell in &library.cells {
            let mut bound = LibraryCell {
                name: cell.name.clone(),
                pins: Vec::new(),
                arcs: Vec::new(),
                tests: Vec::new(),
                pin_index: FastMap::default(),
            };
            for pin in &cell.pins {
                let direction = match pin.direction {
                    liberty::PinDirection::Output | liberty::PinDirection::Inout => {
                        PinDirection::Output
                    }
                    _ => PinDirection::Input,
                };
                let base = pin.capacitance.unwrap_or(0.0);
                let rise = pin.rise_capacitance.unwrap_or(base);
                let fall = pin.fall_capacitance.unwrap_or(base);
                let (early_rise, late_rise) = pin.rise_capacitance_range.unwrap_or((rise, rise));
                let (early_fall, late_fall) = pin.fall_capacitance_range.unwrap_or((fall, fall));
                let scale = units.capacitance_ff;
                bound
                    .pin_index
                    .insert(pin.name.clone(), bound.pins.len() as u32);
                bound.pins.push(LibraryPin {
                    name: pin.name.clone(),
                    direction,
                    capacitance: [
                        early_rise * scale,
                        early_fall * scale,
                        late_rise * scale,
                        late_fall * scale,
                    ],
                    function: pin.function.clone(),
                });
            }
            for pin in &cell.pins {
                let to = bound.pin_index[&pin.name];
                for (group_index, group) in pin.timings.iter().enumerate() {
                    let superseded = policy == TimingGroupPolicy::LastPerRelatedPin
                        && pin.timings[group_index + 1..]
                            .iter()
                            .any(|later| later.related_pins == group.related_pins);
                    if superseded {
                        continue;
                    }
                    let class = group.timing_type.class();
                    if let liberty::TimingType::Check(check) = group.timing_type {
                        *skipped.entry(check.name()).or_default() +=
                            group.related_pins.len().max(1);
                        continue;
                    }
                    let edge = group.timing_type.clock_edge().map(|edge| match edge {
                        liberty::ClockEdge::Rising => Transition::Rise,
                        liberty::ClockEdge::Falling => Transition::Fall,
                    });
                    let mut store = |table: &Option<liberty::Table>, value_scale: f64| {
                        table
                            .as_ref()
                            .map(|table| push_table(tables, table, &units, value_scale))
                    };
                    let time = units.time_ps;
                    for related in &group.related_pins {
                        let Some(&from) = bound.pin_index.get(related) else {
                            notes
                                .unknown_related_pins
                                .push(format!("{}/{} -> {}", cell.name, related, pin.name));
                            continue;
                        };
                        match class {
                            liberty::TimingClass::Setup | liberty::TimingClass::Hold => {
                                let kind = if class == liberty::TimingClass::Setup {
                                    TestKind::Setup
                                } else {
                                    TestKind::Hold
                                };
                                bound.tests.push(LibraryTest {
                                    clock: from,
                                    data: to,
                                    kind,
                                    clock_edge: edge.unwrap_or(Transition::Rise),
                                    constraint: [
                                        store(&group.rise_constraint, time),
                                        store(&group.fall_constraint, time),
                                    ],
                                });
                            }
                            liberty::TimingClass::Arc => {
                                let unateness = match group.timing_sense {
                                    Some(liberty::TimingSense::PositiveUnate) => {
                                        Unateness::Positive
                                    }
                                    Some(liberty::TimingSense::NegativeUnate) => {
                                        Unateness::Negative
                                    }
                                    _ => Unateness::NonUnate,
                                };
                                bound.arcs.push(LibraryArc {
                                    from,
                                    to,
                                    unateness,
                                    clock_edge: edge,
                                    delay: [
                                        store(&group.cell_rise, time),
                                        store(&group.cell_fall, time),
                                    ],
                                    slew: [
                                        store(&group.rise_transition, time),
                                        store(&group.fall_transition, time),
                                    ],
                                    when: group.when.clone(),
                                });
                            }
                            // The model refuses unknown types; checks were counted above.
                            liberty::TimingClass::Check | liberty::TimingClass::Unknown => {}
                        }
                    }
                }
            }
            cells.insert(cell.name.clone(), bound);
        }
        let mut skipped: Vec<(&'static str, usize)> = skipped.into_iter().collect();
        skipped.sort();
        notes.skipped_checks = skipped;
        (
            CellLibrary {
                cells,
                split_specific: FastMap::default(),
            },
            notes,
        )
    }

    /// Adds the cells of `other` (bound from a file read for this split alone when
    /// `split_specific`, else for both) that this library does not have yet; a cell
    /// read for both splits gives way to one read for this split.
    pub fn merge(&mut self, other: CellLibrary, split_specific: bool) {
        for (name, cell) in other.cells {
            let existing = self.split_specific.get(&name).copied();
            let replace = match existing {
                None => true,
                Some(existing_specific) => split_specific && !existing_specific,
            };
            if replace {
                self.split_specific.insert(name.clone(), split_specific);
                self.cells.insert(name, cell);
            }
        }
    }

    /// The cell called `name`.
    pub fn cell(&self, name: &str) -> Option<&LibraryCell> {
        self.cells.get(name)
    }

    /// Every cell, in no particular order.
    pub fn cells(&self) -> impl Iterator<Item = &LibraryCell> {
        self.cells.values()
    }
}

/// Converts one table to ps/fF and appends it to the store.
fn push_table(
    tables: &mut Vec<NldmTable>,
    table: &liberty::Table,
    units: &liberty::Units,
    value_scale: f64,
) -> TableId {
    use liberty::TableVariable as Variable;
    let axis_scale = |variable: &Option<Variable>| match variable {
        Some(Variable::TotalOutputNetCapacitance) => units.capacitance_ff,
        _ => units.time_ps,
    };
    // The primary argument (input slew, or the related pin's slew) is on index_2 when
    // variable_1 names the other one.
    let primary_is_index_2 = matches!(
        table.variable_1,
        Some(Variable::TotalOutputNetCapacitance) | Some(Variable::ConstrainedPinTransition)
    );
    let scale_1 = axis_scale(&table.variable_1);
    let scale_2 = axis_scale(&table.variable_2);
    let id = TableId::from_index(tables.len());
    tables.push(NldmTable {
        index_1: table.index_1.iter().map(|value| value * scale_1).collect(),
        index_2: table.index_2.iter().map(|value| value * scale_2).collect(),
        values: table
            .values
            .iter()
            .map(|value| value * value_scale)
            .collect(),
        primary_is_index_2,
    });
    id
}
