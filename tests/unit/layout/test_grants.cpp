// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/grants: who holds which layout of which file (what fencing asks), and the next
// synthetic owner a fencing gives a data file.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "layout/grants.hpp"

#include <chrono>
#include <thread>
#include <vector>

using namespace flexfiles::layout;

namespace {

Grant grant(std::uint64_t file, std::uint64_t client, Iomode mode) {
    Grant g;
    g.file = file;
    g.client = client;
    g.iomode = mode;
    return g;
}

void test_holders(void**) {
    GrantRegistry reg;
    Grant a_rw = grant(1, 0xa, Iomode::ReadWrite);
    Grant a_read = grant(1, 0xa, Iomode::Read);
    Grant b_read = grant(1, 0xb, Iomode::Read);
    Grant c_rw = grant(2, 0xc, Iomode::ReadWrite);
    for (Grant* g : {&a_rw, &a_read, &b_read, &c_rw})
        reg.add(*g);
    assert_int_equal(reg.size(), 4);
    assert_int_equal(reg.grants(1), 3);
    assert_true(a_rw.id != 0 && a_rw.id != a_read.id && a_read.id != b_read.id);

    // RW holders of file 1 other than b: a, once
    auto h = reg.holders(1, 0xb, Iomode::ReadWrite);
    assert_int_equal(h.size(), 1);
    assert_int_equal(h[0], 0xa);
    // ... other than a: none (a's READ and RW segments are a's)
    assert_true(reg.holders(1, 0xa, Iomode::ReadWrite).empty());
    // any iomode, excluding nobody: a then b
    h = reg.holders(1, 0, std::nullopt);
    assert_int_equal(h.size(), 2);
    assert_int_equal(h[0], 0xa);
    assert_int_equal(h[1], 0xb);
    // another file, an unknown file
    assert_int_equal(reg.holders(2, 0xa, Iomode::ReadWrite).size(), 1);
    assert_true(reg.holders(3, 0, std::nullopt).empty());

    // returning the RW segment leaves a's READ one
    assert_true(reg.remove(a_rw));
    assert_false(reg.remove(a_rw));
    assert_true(reg.holders(1, 0xb, Iomode::ReadWrite).empty());
    assert_int_equal(reg.holders(1, 0xb, Iomode::Read).size(), 1);
    assert_true(reg.remove(a_read));
    assert_true(reg.remove(b_read));
    assert_int_equal(reg.grants(1), 0);
    assert_int_equal(reg.size(), 1);
    Grant never = grant(2, 0xc, Iomode::ReadWrite);
    assert_false(reg.remove(never)); // same file, not recorded
    assert_int_equal(reg.size(), 1);
}

void test_unknown_client_is_another_client(void**) {
    // A grant whose holder LAYOUTGET could not tell (client 0) conflicts with everybody.
    GrantRegistry reg;
    Grant g = grant(5, 0, Iomode::ReadWrite);
    reg.add(g);
    assert_int_equal(reg.holders(5, 0xa, Iomode::ReadWrite).size(), 1);
    assert_true(reg.remove(g));
}

void test_concurrent(void**) {
    GrantRegistry reg;
    constexpr int kThreads = 4, kPerThread = 2000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
        threads.emplace_back([&reg, t] {
            std::vector<Grant> mine(kPerThread);
            for (int i = 0; i < kPerThread; i++) {
                mine[i] =
                    grant(static_cast<std::uint64_t>(i % 7), static_cast<std::uint64_t>(t + 1),
                          i % 2 ? Iomode::Read : Iomode::ReadWrite);
                reg.add(mine[i]);
                (void)reg.holders(mine[i].file, 0, Iomode::ReadWrite);
            }
            for (auto& g : mine)
                if (!reg.remove(g))
                    abort();
        });
    for (auto& th : threads)
        th.join();
    assert_int_equal(reg.size(), 0);
}

void test_next_fencing_id(void**) {
    assert_int_equal(next_fencing_id(1000000, 1000000, 1999999), 1000001);
    assert_int_equal(next_fencing_id(1500000, 1000000, 1999999), 1500001);
    // wraps at the top of the range
    assert_int_equal(next_fencing_id(1999999, 1000000, 1999999), 1000000);
    // outside the range (a map from an older configuration): the start of the range
    assert_int_equal(next_fencing_id(0, 1000000, 1999999), 1000000);
    assert_int_equal(next_fencing_id(4000000000u, 1000000, 1999999), 1000000);
    // a range of one id, a range given backwards
    assert_int_equal(next_fencing_id(7, 7, 7), 7);
    assert_int_equal(next_fencing_id(8, 10, 5), 9);
    assert_int_equal(next_fencing_id(4294967294u, 1, 4294967294u), 1);
    // every id of a small range comes back after (max - min + 1) steps, never twice before
    std::uint32_t id = 20;
    std::vector<bool> seen(11, false);
    for (int i = 0; i < 11; i++) {
        assert_false(seen[id - 20]);
        seen[id - 20] = true;
        id = next_fencing_id(id, 20, 30);
    }
    assert_int_equal(id, 20);
}

// An RW layout that ends leaves the file "unseen" until the data servers are asked after
// the end; a READ layout's end does not; an answer to a question asked before the end does
// not count.
void test_writes_unseen_after_the_last_rw_layout(void**) {
    GrantRegistry r;
    Grant rw1 = grant(7, 1, Iomode::ReadWrite), rw2 = grant(7, 2, Iomode::ReadWrite);
    Grant rd = grant(8, 1, Iomode::Read);
    assert_false(r.writes_unseen(7));
    r.add(rw1);
    r.add(rw2);
    r.add(rd);
    assert_true(r.writes_unseen(7));
    assert_false(r.writes_unseen(8));
    const auto before_end = std::chrono::steady_clock::now();
    assert_true(r.remove(rw1));
    assert_int_equal(r.files_unseen(), 0); // rw2 is still out
    assert_true(r.remove(rw2));
    assert_true(r.remove(rd));
    assert_true(r.writes_unseen(7));
    assert_false(r.writes_unseen(8));
    assert_int_equal(r.files_unseen(), 1);
    r.data_servers_seen(7, before_end - std::chrono::seconds(1));
    assert_true(r.writes_unseen(7)); // asked before the layout ended: not evidence
    r.data_servers_seen(7, std::chrono::steady_clock::now());
    assert_false(r.writes_unseen(7));
    Grant again = grant(7, 3, Iomode::ReadWrite);
    r.add(again);
    assert_true(r.remove(again));
    r.forget_unseen(7); // the file was removed
    assert_false(r.writes_unseen(7));
    assert_int_equal(r.files_unseen(), 0);
}

// The flag a file's FSAL object holds follows writes_unseen() through every change made
// with it: GETATTR reads it without the registry's lock.
void test_unseen_flag_mirrors_the_registry(void**) {
    GrantRegistry r;
    UnseenFlag flag{true}; // a new object's conservative value
    r.mirror_unseen(7, flag);
    assert_false(flag.load());
    Grant rd = grant(7, 1, Iomode::Read), rw = grant(7, 2, Iomode::ReadWrite);
    r.add(rd, &flag);
    assert_false(flag.load()); // a READ layout writes nothing
    r.add(rw, &flag);
    assert_true(flag.load());
    assert_true(r.remove(rd, &flag));
    assert_true(flag.load()); // rw is still out
    assert_true(r.remove(rw, &flag));
    assert_true(flag.load()); // ended, the data servers not asked since
    r.data_servers_seen(7, std::chrono::steady_clock::now() - std::chrono::seconds(1), &flag);
    assert_true(flag.load()); // asked before the end: not evidence
    r.data_servers_seen(7, std::chrono::steady_clock::now(), &flag);
    assert_false(flag.load());
    Grant again = grant(7, 3, Iomode::ReadWrite);
    r.add(again, &flag);
    assert_true(r.remove(again, &flag));
    assert_true(flag.load());
    r.forget_unseen(7, &flag);
    assert_false(flag.load());
    UnseenFlag other{false}; // another file's flag is never touched
    Grant elsewhere = grant(8, 1, Iomode::ReadWrite);
    r.add(elsewhere, &other);
    assert_true(other.load());
    assert_false(flag.load());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holders),
        cmocka_unit_test(test_unknown_client_is_another_client),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_next_fencing_id),
        cmocka_unit_test(test_writes_unseen_after_the_last_rw_layout),
        cmocka_unit_test(test_unseen_flag_mirrors_the_registry),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
