// The report's pipeline timeline: the schedule re-simulated from the plan, model and cluster a
// simulation result carries, drawn as SVG — one row per pipeline stage and one per communication
// stream, the same events `tessel simulate --trace` writes to its Perfetto trace.
#pragma once
#include <cstddef>
#include <string>

#include "core/json_io.h"
#include "simulator/result.h"

namespace tessel {

// Re-simulates with the trace recorded. InputError naming `file` and the key when the embedded
// plan, model, cluster or options are missing or invalid. The simulator options are the file's
// "options" (simulate --json records them), else the defaults (the caller compares step times).
SimulationResult resimulate_with_trace(const json& simulation, const std::string& file);

struct TimelineDrawing {
    std::string svg;
    std::size_t events = 0;          // trace events simulated
    std::size_t compute_events = 0;  // of them on the stages' compute streams
    std::size_t event_rects = 0;     // rectangles drawn for events (after merging)
    std::size_t recompute_rects = 0; // recomputation drawn at the start of each backward
    double merge_gap_s = 0;          // 0: every event drawn as its own rectangle
    std::string caption;             // what is drawn, and what was merged
};

// More events than max_rects: neighbouring events of one kind on one row are merged when the
// gap between them is below a threshold, doubled from one pixel until the count fits.
TimelineDrawing draw_timeline(const SimulationResult& r, std::size_t max_rects = 20000);

}  // namespace tessel
