//! Fuzz target for the verilog parser and the linker: any input must give Ok or Err,
//! never a panic; a netlist that parses is linked against the tiny libraries (a failed
//! link must leave the design as it was) and, when it links, its graph is built. Parsing
//! module bodies in small pieces on several threads gives what one go gives.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "tiny.rs"]
mod tiny;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        // Module bodies parsed in small pieces on several threads: the same netlist, or
        // the same error, as in one go.
        let one_go = tachyon_verilog::parse_netlist_in_pieces("fuzz.v", text, usize::MAX)
            .map_err(|error| error.to_string());
        let pieces = tachyon_verilog::parse_netlist_in_pieces("fuzz.v", text, 8)
            .map_err(|error| error.to_string());
        assert!(one_go == pieces, "{one_go:?} != {pieces:?}");
        if let Ok(netlist) = tachyon_verilog::parse_netlist("fuzz.v", text) {
            let _ = netlist.top(None);
            let _ = netlist.summary();
            for module in &netlist.modules {
                let _ = module.port_bits();
                // A few expressions only: each may legitimately expand to many bits.
                for assign in module.assigns.iter().take(8) {
                    let _ = assign.target.bits(module);
                    let _ = assign.source.bits(module);
                }
                for instance in module.instances.iter().take(8) {
                    match &instance.connections {
                        tachyon_verilog::Connections::Named(named) => {
                            for connection in named.iter().take(8) {
                                if let Some(expression) = &connection.expression {
                                    let _ = expression.bits(module);
                                    let _ = expression.width(module);
                                    let _ = expression.first_bit(module);
                                }
                            }
                        }
                        tachyon_verilog::Connections::Positional(expressions) => {
                            for expression in expressions.iter().take(8) {
                                let _ = expression.bits(module);
                            }
                        }
                    }
                }
            }
            let mut design = tiny::with_libraries().clone();
            let before = format!("{design:?}");
            let source = tachyon_source::Source {
                file: "fuzz.v",
                text,
            };
            match design.set_netlist_from(&netlist, None, &[source]) {
                Ok(()) => {
                    let _ = design.build_graph();
                }
                Err(_) => tiny::assert_unchanged(&design, &before, "netlist read"),
            }
        }
    }
});
