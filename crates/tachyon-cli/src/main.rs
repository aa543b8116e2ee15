//! The `tachyon` command.

fn main() {
    println!("tachyon {}", env!("CARGO_PKG_VERSION"));
}
