// Sharding arithmetic against hand-counted splits.
#include <gtest/gtest.h>

#include "executor/sharding.h"

namespace tessel {

TEST(Sharding, SplitRangeCoversInOrderAndBalances) {
    // 10 over 4: the first 10 % 4 = 2 ranks get one more.
    EXPECT_EQ(split_range(10, 4, 0), (Range{0, 3}));
    EXPECT_EQ(split_range(10, 4, 1), (Range{3, 6}));
    EXPECT_EQ(split_range(10, 4, 2), (Range{6, 8}));
    EXPECT_EQ(split_range(10, 4, 3), (Range{8, 10}));
    for (std::size_t n : {0, 1, 7, 64, 1023})
        for (int parts : {1, 2, 3, 8}) {
            std::size_t next = 0;
            for (int i = 0; i < parts; ++i) {
                Range r = split_range(n, parts, i);
                EXPECT_EQ(r.begin, next);
                EXPECT_LE(r.size(), n / parts + 1);
                EXPECT_GE(r.size(), n / parts);
                next = r.end;
            }
            EXPECT_EQ(next, n);
        }
}

TEST(Sharding, PaddedShardsAreEqualAndCoverThePaddedBuffer) {
    EXPECT_EQ(padded_shard_size(10, 4), 3u);  // 10 -> 12 = 4 x 3
    EXPECT_EQ(padded_shard(10, 4, 3), (Range{9, 12}));
    EXPECT_EQ(padded_shard_size(8, 4), 2u);
    EXPECT_EQ(padded_shard_size(1, 8), 1u);
    EXPECT_EQ(padded_shard(5, 1, 0), (Range{0, 5}));
}

TEST(Sharding, Intersect) {
    EXPECT_EQ(intersect({0, 10}, {5, 20}), (Range{5, 10}));
    EXPECT_TRUE(intersect({0, 5}, {5, 9}).empty());
    EXPECT_TRUE(intersect({6, 9}, {0, 3}).empty());
}

}  // namespace tessel
