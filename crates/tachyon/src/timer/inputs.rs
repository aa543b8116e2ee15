//! The files of a design, one at a time: what a `.tau2015` names, so that a caller can
//! read them one by one (and show which one it is reading).

use std::path::{Path, PathBuf};

use tachyon_kernels::Split;

use super::{read_checked, Timer, TimerError};

/// One input file of a design and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesignInput {
    /// A Liberty library for one split, or both (`None`).
    Liberty(Option<Split>, PathBuf),
    /// The gate-level netlist.
    Verilog(PathBuf),
    /// Parasitics.
    Spef(PathBuf),
    /// TAU 2015 `.timing` assertions.
    Timing(PathBuf),
    /// SDC assertions.
    Sdc(PathBuf),
}

impl DesignInput {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            DesignInput::Liberty(_, path)
            | DesignInput::Verilog(path)
            | DesignInput::Spef(path)
            | DesignInput::Timing(path)
            | DesignInput::Sdc(path) => path,
        }
    }
}

impl Timer {
    /// The files a `.tau2015` names (relative to its folder), in reading order: the
    /// early and late libraries, the netlist, the parasitics, and the sibling
    /// `.timing` if there is one.
    pub fn tau2015_inputs(path: impl AsRef<Path>) -> Result<Vec<DesignInput>, TimerError> {
        let path = path.as_ref();
        let text = read_checked(path)?;
        let files = tachyon_sdc::parse_tau2015(&path.display().to_string(), &text)?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let mut inputs = vec![
            DesignInput::Liberty(Some(Split::Early), folder.join(&files.early_liberty)),
            DesignInput::Liberty(Some(Split::Late), folder.join(&files.late_liberty)),
            DesignInput::Verilog(folder.join(&files.verilog)),
            DesignInput::Spef(folder.join(&files.spef)),
        ];
        let timing = path.with_extension("timing");
        if timing.is_file() {
            inputs.push(DesignInput::Timing(timing));
        }
        Ok(inputs)
    }

    /// Reads one input file.
    pub fn read_input(&mut self, input: &DesignInput) -> Result<(), TimerError> {
        match input {
            DesignInput::Liberty(split, path) => self.read_celllib(*split, path),
            DesignInput::Verilog(path) => self.read_verilog(path),
            DesignInput::Spef(path) => self.read_spef(path),
            DesignInput::Timing(path) => self.read_timing(path),
            DesignInput::Sdc(path) => self.read_sdc(path),
        }
    }
}
