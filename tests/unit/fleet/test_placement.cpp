// SPDX-License-Identifier: LGPL-3.0-or-later
// Placement of a new file's mirrors (fleet/placement.hpp): distinct, Up, not drained,
// round-robin, clear errors.
#include "cmocka_cpp.hpp"
#include "fleet/placement.hpp"

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace flexfiles::fleet;

namespace {

std::vector<PlacementCandidate> all_up(std::initializer_list<std::uint64_t> ids) {
    std::vector<PlacementCandidate> v;
    for (auto id : ids)
        v.push_back({id, Health::up, false});
    return v;
}

void test_distinct_and_k(void**) {
    auto c = all_up({1, 2, 3, 4, 5});
    for (std::uint64_t cursor = 0; cursor < 12; ++cursor) {
        for (unsigned k = 1; k <= 5; ++k) {
            auto r = choose_mirrors(c, k, cursor);
            assert_true(r.ok());
            assert_int_equal(r.value.size(), k);
            std::set<std::uint64_t> s(r.value.begin(), r.value.end());
            assert_int_equal(s.size(), k);
        }
    }
}

void test_skips_down_suspect_drained(void**) {
    std::vector<PlacementCandidate> c = {
        {1, Health::down, false},    {2, Health::up, false},
        {3, Health::suspect, false}, {4, Health::up, true}, // drained
        {5, Health::up, false},
    };
    for (std::uint64_t cursor = 0; cursor < 6; ++cursor) {
        auto r = choose_mirrors(c, 2, cursor);
        assert_true(r.ok());
        std::set<std::uint64_t> s(r.value.begin(), r.value.end());
        assert_true(s == (std::set<std::uint64_t>{2, 5}));
    }
}

void test_too_few(void**) {
    // Two undrained data servers, one of them Down: the shortage heals when it is back.
    std::vector<PlacementCandidate> c = {
        {1, Health::down, false}, {2, Health::up, false}, {3, Health::up, true}};
    auto r = choose_mirrors(c, 2, 0);
    assert_false(r.ok());
    assert_int_equal(static_cast<int>(r.status.code),
                     static_cast<int>(DsErrc::servers_unavailable));
    assert_true(r.value.empty());
    // The message says what was needed and what there is.
    assert_non_null(std::strstr(r.status.message.c_str(), "need 2"));
    assert_non_null(std::strstr(r.status.message.c_str(), "have 1 of 3"));
    // Mirrors = 3 over two undrained servers cannot be placed whatever comes back.
    auto three = choose_mirrors(c, 3, 0);
    assert_int_equal(static_cast<int>(three.status.code),
                     static_cast<int>(DsErrc::too_few_servers));
    // Suspect is not Up either, and still transient.
    std::vector<PlacementCandidate> suspect = {{1, Health::suspect, false}, {2, Health::up, false}};
    assert_int_equal(static_cast<int>(choose_mirrors(suspect, 2, 0).status.code),
                     static_cast<int>(DsErrc::servers_unavailable));

    auto none = choose_mirrors({}, 1, 0);
    assert_int_equal(static_cast<int>(none.status.code), static_cast<int>(DsErrc::too_few_servers));
}

void test_zero_mirrors(void**) {
    auto r = choose_mirrors(all_up({1, 2}), 0, 0);
    assert_int_equal(static_cast<int>(r.status.code), static_cast<int>(DsErrc::invalid_argument));
}

void test_round_robin(void**) {
    auto c = all_up({30, 10, 20}); // input order does not matter: ordered by Id
    std::vector<std::vector<std::uint64_t>> want = {{10, 20}, {20, 30}, {30, 10}, {10, 20}};
    for (std::uint64_t cursor = 0; cursor < want.size(); ++cursor) {
        auto r = choose_mirrors(c, 2, cursor);
        assert_true(r.ok());
        assert_true(r.value == want[cursor]);
    }
    // Over N consecutive files every server gets the same number of mirrors.
    std::map<std::uint64_t, int> count;
    for (std::uint64_t cursor = 0; cursor < 300; ++cursor)
        for (auto id : choose_mirrors(c, 2, cursor).value)
            ++count[id];
    assert_int_equal(count[10], 200);
    assert_int_equal(count[20], 200);
    assert_int_equal(count[30], 200);
    // A huge cursor wraps, no overflow.
    auto r = choose_mirrors(c, 3, UINT64_MAX);
    assert_true(r.ok());
    assert_int_equal(r.value.size(), 3);
}

void test_duplicate_ids_count_once(void**) {
    std::vector<PlacementCandidate> c = {
        {7, Health::up, false}, {7, Health::up, false}, {8, Health::up, false}};
    auto r = choose_mirrors(c, 2, 0);
    assert_true(r.ok());
    assert_true(r.value != (std::vector<std::uint64_t>{7, 7}));
    auto r3 = choose_mirrors(c, 3, 0);
    assert_int_equal(static_cast<int>(r3.status.code), static_cast<int>(DsErrc::too_few_servers));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distinct_and_k), cmocka_unit_test(test_skips_down_suspect_drained),
        cmocka_unit_test(test_too_few),        cmocka_unit_test(test_zero_mirrors),
        cmocka_unit_test(test_round_robin),    cmocka_unit_test(test_duplicate_ids_count_once),
    };
    return cmocka_run_group_tests_name("fleet_placement", tests, nullptr, nullptr);
}
