#include "core/rank_groups.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/errors.h"

namespace tessel {

namespace {

std::vector<std::string> split_order(const std::string& order) {
    std::vector<std::string> out;
    std::stringstream ss(order);
    std::string tok;
    while (std::getline(ss, tok, '-')) out.push_back(tok);
    for (const char* d : {"tp", "cp", "dp", "pp"})
        if (std::count(out.begin(), out.end(), d) != 1)
            throw InputError("placement '" + order + "': expected each of tp, cp, dp, pp exactly once");
    if (out.size() != 4) throw InputError("placement '" + order + "': expected exactly tp, cp, dp and pp");
    return out;
}

int& coord(RankCoords& c, const std::string& d) {
    if (d == "tp") return c.tp;
    if (d == "cp") return c.cp;
    if (d == "dp") return c.dp;
    return c.pp;
}
int size_of(const ParallelSizes& s, const std::string& d) {
    if (d == "tp") return s.tp;
    if (d == "cp") return s.cp;
    if (d == "dp") return s.dp;
    return s.pp;
}

}  // namespace

RankCoords coords_of(int rank, const std::string& order, const ParallelSizes& sizes) {
    RankCoords c;
    int r = rank;
    for (const auto& d : split_order(order)) {
        coord(c, d) = r % size_of(sizes, d);
        r /= size_of(sizes, d);
    }
    return c;
}

int rank_of(const RankCoords& coords, const std::string& order, const ParallelSizes& sizes) {
    RankCoords c = coords;
    int rank = 0, stride = 1;
    for (const auto& d : split_order(order)) {
        rank += coord(c, d) * stride;
        stride *= size_of(sizes, d);
    }
    return rank;
}

std::vector<std::vector<int>> rank_groups(const std::string& order, const ParallelSizes& sizes, const std::string& dims) {
    auto dim_list = split_order(order);
    std::vector<std::string> selected;
    std::stringstream ss(dims);
    std::string tok;
    while (std::getline(ss, tok, '-')) selected.push_back(tok);
    std::map<int, std::vector<int>> by_key;  // key: the rank with every selected coordinate zeroed
    for (int r = 0; r < sizes.world(); ++r) {
        RankCoords c = coords_of(r, order, sizes);
        for (const auto& d : selected) coord(c, d) = 0;
        by_key[rank_of(c, order, sizes)].push_back(r);
    }
    std::vector<std::vector<int>> out;
    for (auto& [k, g] : by_key) out.push_back(std::move(g));
    return out;
}

std::vector<int> group_of(int rank, const std::string& order, const ParallelSizes& sizes, const std::string& dims) {
    RankCoords base = coords_of(rank, order, sizes);
    std::vector<std::string> selected;
    std::stringstream ss(dims);
    std::string tok;
    while (std::getline(ss, tok, '-')) selected.push_back(tok);
    std::vector<int> out;
    for (int r = 0; r < sizes.world(); ++r) {
        RankCoords c = coords_of(r, order, sizes);
        RankCoords masked = c, masked_base = base;
        for (const auto& d : selected) coord(masked, d) = 0, coord(masked_base, d) = 0;
        if (masked.tp == masked_base.tp && masked.cp == masked_base.cp && masked.dp == masked_base.dp &&
            masked.pp == masked_base.pp)
            out.push_back(r);
    }
    return out;
}

}  // namespace tessel
