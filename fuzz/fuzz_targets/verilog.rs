//! Fuzz target for the verilog parser: any input must give Ok or Err, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(netlist) = tachyon_verilog::parse_netlist("fuzz.v", text) {
            let _ = netlist.top(None);
            let _ = netlist.summary();
            for module in &netlist.modules {
                let _ = module.port_bits();
                let _ = module.wire_bits();
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
        }
    }
});
