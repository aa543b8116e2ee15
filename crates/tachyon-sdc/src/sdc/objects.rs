//! Design objects in SDC: what the reader asks of the design ([`DesignView`]), the Tcl
//! values object queries return (one word per object, `kind:name`), name patterns, and
//! how a command's object argument resolves to [`Object`]s.
//!
//! A query such as `[get_ports {a b}]` returns the list `port:a port:b`; a command given
//! such handles takes them as they are. A bare name (`clk`, `{in1 in2}`, `u1/*`) is a
//! pattern looked up as OpenSTA does, the most general kind first: clocks, library
//! cells, instances, ports, pins, nets, among the kinds the argument accepts.

use super::{Object, ObjectKind};

/// A port's (or cell pin's) direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortDirection {
    /// An input.
    Input,
    /// An output.
    Output,
    /// A bidirectional port.
    Inout,
}

/// What the reader needs to know of the design: its names. Instance pins are named
/// `instance/pin`, library pins `cell/pin`.
pub trait DesignView: Send + Sync {
    /// The design (top module) name.
    fn design_name(&self) -> String;
    /// How many ps, fF and kOhm one unit of the first library is.
    fn library_units(&self) -> Option<super::SdcUnits>;
    /// The direction of port `name`, if the design has it.
    fn port(&self, name: &str) -> Option<PortDirection>;
    /// Every port with its direction, in netlist order.
    fn ports(&self) -> Vec<(String, PortDirection)>;
    /// The cell of instance `name`, if the design has it.
    fn instance_cell(&self, name: &str) -> Option<String>;
    /// Calls `visit(instance, cell)` for every instance.
    fn for_each_instance(&self, visit: &mut dyn FnMut(&str, &str));
    /// The pins of library cell `cell` with their directions, if a library has it.
    fn cell_pins(&self, cell: &str) -> Option<Vec<(String, PortDirection)>>;
    /// Whether the design has net `name`.
    fn has_net(&self, name: &str) -> bool;
    /// Calls `visit(net)` for every net.
    fn for_each_net(&self, visit: &mut dyn FnMut(&str));
    /// Every library cell name.
    fn library_cells(&self) -> Vec<String>;
}

/// The Tcl word for an object.
pub(crate) fn handle(object: &Object) -> String {
    format!("{}:{}", object.kind.word(), object.name)
}

/// The object a Tcl word names when it is a handle.
pub(crate) fn parse_handle(word: &str) -> Option<Object> {
    let (kind, name) = word.split_once(':')?;
    let kind = match kind {
        "port" => ObjectKind::Port,
        "pin" => ObjectKind::Pin,
        "net" => ObjectKind::Net,
        "clock" => ObjectKind::Clock,
        "cell" => ObjectKind::Instance,
        "lib_cell" => ObjectKind::LibCell,
        "lib_pin" => ObjectKind::LibPin,
        _ => return None,
    };
    Some(Object::new(kind, name))
}

/// Whether `name` matches the SDC pattern `pattern`: `*` any run of characters, `?` any
/// one, `\` makes the next character literal; everything else (brackets included, as in
/// bus bits `a[3]`) is literal. `*` stays within one hierarchy level (no `/`) unless
/// `hierarchical`.
pub(crate) fn matches(pattern: &str, name: &str, hierarchical: bool) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative glob with one backtrack point (the last `*`).
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some('?') if name[n] != '/' || hierarchical => {
                p += 1;
                n += 1;
                continue;
            }
            Some('\\') if pattern.get(p + 1) == Some(&name[n]) => {
                p += 2;
                n += 1;
                continue;
            }
            Some(&literal) if literal != '\\' && literal != '?' && literal == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((star_p, star_n)) if name[star_n] != '/' || hierarchical => {
                star = Some((star_p, star_n + 1));
                p = star_p + 1;
                n = star_n + 1;
            }
            _ => return false,
        }
    }
    while pattern.get(p) == Some(&'*') {
        p += 1;
    }
    p == pattern.len()
}

/// Whether `pattern` has wildcards (else it is a plain name, looked up directly).
pub(crate) fn is_pattern(pattern: &str) -> bool {
    let mut escaped = false;
    for character in pattern.chars() {
        match character {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' => return true,
            _ => {}
        }
    }
    false
}

/// A pattern's literal name (escapes removed).
pub(crate) fn unescape(pattern: &str) -> String {
    let mut name = String::with_capacity(pattern.len());
    let mut escaped = false;
    for character in pattern.chars() {
        if !escaped && character == '\\' {
            escaped = true;
            continue;
        }
        escaped = false;
        name.push(character);
    }
    name
}

/// Ports matching `pattern`.
pub(crate) fn find_ports(design: &dyn DesignView, pattern: &str) -> Vec<Object> {
    if !is_pattern(pattern) {
        let name = unescape(pattern);
        return match design.port(&name) {
            Some(_) => vec![Object::new(ObjectKind::Port, name)],
            None => Vec::new(),
        };
    }
    design
        .ports()
        .into_iter()
        .filter(|(name, _)| matches(pattern, name, true))
        .map(|(name, _)| Object::new(ObjectKind::Port, name))
        .collect()
}

/// Instances matching `pattern`.
pub(crate) fn find_instances(
    design: &dyn DesignView,
    pattern: &str,
    hierarchical: bool,
) -> Vec<Object> {
    if !is_pattern(pattern) {
        let name = unescape(pattern);
        return match design.instance_cell(&name) {
            Some(_) => vec![Object::new(ObjectKind::Instance, name)],
            None => Vec::new(),
        };
    }
    let mut found = Vec::new();
    design.for_each_instance(&mut |name, _| {
        if matches(pattern, name, hierarchical) {
            found.push(Object::new(ObjectKind::Instance, name));
        }
    });
    found.sort();
    found
}

/// Instance pins matching `pattern` (`instance/pin`: the last `/` separates the pin).
pub(crate) fn find_pins(design: &dyn DesignView, pattern: &str, hierarchical: bool) -> Vec<Object> {
    let Some((instance_pattern, pin_pattern)) = pattern.rsplit_once('/') else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut add_instance_pins = |instance: &str, cell: &str| {
        for (pin, _) in design.cell_pins(cell).unwrap_or_default() {
            if matches(pin_pattern, &pin, false) {
                found.push(Object::new(ObjectKind::Pin, format!("{instance}/{pin}")));
            }
        }
    };
    if is_pattern(instance_pattern) {
        design.for_each_instance(&mut |instance, cell| {
            if matches(instance_pattern, instance, hierarchical) {
                add_instance_pins(instance, cell);
            }
        });
        found.sort();
    } else {
        let instance = unescape(instance_pattern);
        if let Some(cell) = design.instance_cell(&instance) {
            add_instance_pins(&instance, &cell);
        }
    }
    found
}

/// Nets matching `pattern`.
pub(crate) fn find_nets(design: &dyn DesignView, pattern: &str, hierarchical: bool) -> Vec<Object> {
    if !is_pattern(pattern) {
        let name = unescape(pattern);
        return if design.has_net(&name) {
            vec![Object::new(ObjectKind::Net, name)]
        } else {
            Vec::new()
        };
    }
    let mut found = Vec::new();
    design.for_each_net(&mut |name| {
        if matches(pattern, name, hierarchical) {
            found.push(Object::new(ObjectKind::Net, name));
        }
    });
    found.sort();
    found
}

/// Library cells matching `pattern` (a `library/` prefix is allowed and ignored).
pub(crate) fn find_lib_cells(design: &dyn DesignView, pattern: &str) -> Vec<Object> {
    let pattern = pattern.rsplit_once('/').map_or(pattern, |(_, cell)| cell);
    design
        .library_cells()
        .into_iter()
        .filter(|cell| matches(pattern, cell, true))
        .map(|cell| Object::new(ObjectKind::LibCell, cell))
        .collect()
}

/// Library pins matching `pattern` (`cell/pin`, a `library/` prefix allowed).
pub(crate) fn find_lib_pins(design: &dyn DesignView, pattern: &str) -> Vec<Object> {
    let Some((cell_pattern, pin_pattern)) = pattern.rsplit_once('/') else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for cell in find_lib_cells(design, cell_pattern) {
        for (pin, _) in design.cell_pins(&cell.name).unwrap_or_default() {
            if matches(pin_pattern, &pin, false) {
                found.push(Object::new(
                    ObjectKind::LibPin,
                    format!("{}/{pin}", cell.name),
                ));
            }
        }
    }
    found
}

/// The direction of a port or instance pin object, if the design knows it.
pub(crate) fn direction_of(design: &dyn DesignView, object: &Object) -> Option<PortDirection> {
    match object.kind {
        ObjectKind::Port => design.port(&object.name),
        ObjectKind::Pin => {
            let (instance, pin) = object.name.rsplit_once('/')?;
            let cell = design.instance_cell(instance)?;
            design
                .cell_pins(&cell)?
                .into_iter()
                .find(|(name, _)| name == pin)
                .map(|(_, direction)| direction)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_like_sdc_globs() {
        assert!(matches("req_msg[3]", "req_msg[3]", false));
        assert!(matches("req_*", "req_msg[3]", false));
        assert!(matches("*", "a", false));
        assert!(matches("a?c", "abc", false));
        assert!(!matches("a?c", "a/c", false));
        assert!(matches("a?c", "a/c", true));
        assert!(!matches("u*", "u1/u2", false));
        assert!(matches("u*", "u1/u2", true));
        assert!(matches("*_reg*", "x_reg_1", false));
        assert!(!matches("a*b", "acbd", false));
        assert!(matches("a\\*", "a*", false));
        assert!(!matches("a\\*", "ab", false));
        assert!(is_pattern("a*") && !is_pattern("a\\*") && !is_pattern("a[1]"));
        assert_eq!(unescape("a\\*b"), "a*b");
    }

    #[test]
    fn handles_round_trip() {
        let object = Object::new(ObjectKind::Pin, "u1/A");
        assert_eq!(handle(&object), "pin:u1/A");
        assert_eq!(parse_handle("pin:u1/A"), Some(object));
        assert_eq!(parse_handle("clk"), None);
        assert_eq!(parse_handle("u1:A"), None);
    }
}
