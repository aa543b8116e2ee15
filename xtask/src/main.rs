//! Project tasks: `cargo xtask ptx | gen | bench`.

fn main() {
    eprintln!("xtask: no task yet");
}
