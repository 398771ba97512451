// Human-readable output of a search: the ranked table with the numbers that decide it, the search
// statistics, and why the winner beats the runner-up.
#pragma once
#include <string>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "planner/search.h"

namespace tessel {

// "considered N plans: R broke a rule, M pruned by memory, B by bound, S simulated in X s".
std::string format_search_stats(const SearchResult& r);

// The top-K table: rank, plan, placement, step time, MFU, bubble, exposed communication, peak
// memory (and GPUs and tokens per dollar under the tokens-per-dollar objective).
std::string format_ranking_table(const SearchResult& r, const ClusterSpec& c, Objective o);

// Why #1 beats #2: the plan dimensions that differ and the time components (or memory, for the
// memory objective) that differ most, with signs and seconds. Empty with fewer than two plans.
std::string explain_winner(const SearchResult& r, Objective o);

}  // namespace tessel
