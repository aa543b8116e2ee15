//! The SVG slack histogram: one panel per split (late on top, early below), each a
//! histogram of the endpoints' worst slacks with WNS, TNS and the failing endpoints in
//! its caption, a line at zero slack and one at the WNS. Drawn with `plotters` and its
//! SVG backend (text stays text, so no font is loaded).

use plotters::prelude::*;
use tachyon_kernels::Split;

use crate::summary::{SplitSummary, Summary};

/// Bins per panel.
const BINS: usize = 40;
/// The picture's size in pixels.
const SIZE: (u32, u32) = (960, 720);

/// Bars of failing endpoints and of endpoints that meet timing.
const FAILING: RGBColor = RGBColor(214, 69, 65);
const MET: RGBColor = RGBColor(70, 130, 180);

/// A histogram that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("drawing the slack histogram: {0}")]
pub struct HistogramError(String);

fn drawing_error(error: impl std::fmt::Display) -> HistogramError {
    HistogramError(error.to_string())
}

/// One bin: its slack range and its endpoint count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    /// Lowest slack of the bin (ps).
    pub low: f64,
    /// Highest slack of the bin (ps; excluded, but for the last bin).
    pub high: f64,
    /// Endpoints whose slack falls in it.
    pub count: u32,
}

/// About `n_bins` equal bins over the range of `values` (a range of zero width is
/// widened by 1 ps on each side); when the range holds zero, the bins are shifted so
/// that zero is an edge (a bin is all failing or all met), which may add one bin.
/// Empty for no values.
pub fn bins(values: &[f64], n_bins: usize) -> Vec<Bin> {
    let finite = || values.iter().copied().filter(|value| value.is_finite());
    let (mut low, mut high) = finite().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if low > high || n_bins == 0 {
        return Vec::new();
    }
    if high - low < 1e-9 {
        low -= 1.0;
        high += 1.0;
    }
    let width = (high - low) / n_bins as f64;
    let mut n_bins = n_bins;
    if low < 0.0 && 0.0 < high {
        low = (low / width).floor() * width;
        n_bins = (((high - low) / width).ceil() as usize).max(1);
    }
    let mut bins: Vec<Bin> = (0..n_bins)
        .map(|index| Bin {
            low: low + width * index as f64,
            high: low + width * (index + 1) as f64,
            count: 0,
        })
        .collect();
    for value in finite() {
        let index = (((value - low) / width) as usize).min(n_bins - 1);
        bins[index].count += 1;
    }
    bins
}

fn caption(split: &SplitSummary) -> String {
    let name = match split.split {
        Split::Late => "late (setup)",
        Split::Early => "early (hold)",
    };
    format!(
        "{name}: WNS {:.3} ps, TNS {:.3} ps, {} of {} endpoints failing",
        split.wns + 0.0,
        split.tns + 0.0,
        split.failing,
        split.constrained
    )
}

/// The histogram of `summary`'s endpoint slacks as an SVG document; `title` heads it.
pub fn histogram_svg(summary: &Summary, title: &str) -> Result<String, HistogramError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let root = root
            .titled(title, ("sans-serif", 22))
            .map_err(drawing_error)?;
        let panels = root.split_evenly((2, 1));
        for (panel, split) in panels.iter().zip(&summary.splits) {
            draw_panel(panel, split)?;
        }
        root.present().map_err(drawing_error)?;
    }
    Ok(svg)
}

fn draw_panel<DB: DrawingBackend>(
    panel: &DrawingArea<DB, plotters::coord::Shift>,
    split: &SplitSummary,
) -> Result<(), HistogramError>
where
    DB::ErrorType: 'static,
{
    let bins = bins(&split.endpoint_slacks, BINS);
    let (Some(first), Some(last)) = (bins.first(), bins.last()) else {
        let text = format!("{}: no constrained endpoints", caption(split));
        panel
            .draw(&Text::new(text, (20, 40), ("sans-serif", 16)))
            .map_err(drawing_error)?;
        return Ok(());
    };
    let (low, high) = (first.low, last.high);
    let tallest = bins.iter().map(|bin| bin.count).max().unwrap_or(1).max(1);
    let mut chart = ChartBuilder::on(panel)
        .caption(caption(split), ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(low..high, 0u32..tallest + tallest / 10 + 1)
        .map_err(drawing_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("endpoint slack (ps)")
        .y_desc("endpoints")
        .draw()
        .map_err(drawing_error)?;
    chart
        .draw_series(bins.iter().filter(|bin| bin.count > 0).map(|bin| {
            // Zero is a bin edge (see `bins`): a bin is all failing or all met.
            let color = if bin.low < 0.0 { FAILING } else { MET };
            Rectangle::new([(bin.low, 0), (bin.high, bin.count)], color.filled())
        }))
        .map_err(drawing_error)?;
    let top = tallest + tallest / 10 + 1;
    if low <= 0.0 && 0.0 <= high {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0), (0.0, top)],
                BLACK.stroke_width(1),
            )))
            .map_err(drawing_error)?;
    }
    if split.wns < 0.0 {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(split.wns, 0), (split.wns, top)],
                FAILING.stroke_width(2),
            )))
            .map_err(drawing_error)?
            .label(format!("WNS {:.3} ps", split.wns))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], FAILING.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(drawing_error)?;
    }
    Ok(())
}
