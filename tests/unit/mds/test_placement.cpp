// SPDX-License-Identifier: LGPL-3.0-or-later
// Placement at create (fsal_flexfiles/mds/placement_at_create.hpp) without data servers:
// the fencing-id policy, and a create refused with a clear error when fewer data servers
// than mirrors are Up (nothing is attempted on them).
#include "cmocka_cpp.hpp"
#include "mds/placement_at_create.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <cstring>

using namespace flexfiles;
using namespace flexfiles::mds;
using namespace std::chrono_literals;

namespace {

void test_fencing_ids(void**) {
    assert_int_equal(fencing_id_for(0, 1000, 1999), 1000);
    assert_int_equal(fencing_id_for(999, 1000, 1999), 1999);
    assert_int_equal(fencing_id_for(1000, 1000, 1999), 1000); // wraps
    assert_int_equal(fencing_id_for(1234567, 5, 5), 5);       // one id
    // The whole uint32 range minus 0 and (uid_t)-1 must not overflow.
    assert_int_equal(fencing_id_for(~0ull, 1, 4294967294u), 1 + ~0ull % 4294967294ull);
    assert_int_equal(fencing_id_for(3, 10, 5), 10); // bad range: its minimum
}

void test_too_few_servers_is_refused(void**) {
    fleet::Fleet fleet;
    for (std::uint64_t id = 1; id <= 3; ++id)
        assert_true(fleet.add(offline_fleet::offline_config(id)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));

    PlacementSettings s;
    s.mirrors = 2;
    auto plan = plan_placement(fleet, s, 1234);
    assert_false(plan.ok());
    assert_int_equal(static_cast<int>(plan.status.code),
                     static_cast<int>(fleet::DsErrc::servers_unavailable));
    print_message("%s\n", plan.status.message.c_str());
    assert_non_null(std::strstr(plan.status.message.c_str(), "need 2"));
    assert_non_null(std::strstr(plan.status.message.c_str(), "have 0 of 3"));
    // Nothing was sent to any data server.
    for (const auto& ds : fleet.servers())
        assert_int_equal(ds->counters().requests, 0);
}

void test_no_servers(void**) {
    fleet::Fleet fleet;
    PlacementSettings s;
    auto plan = plan_placement(fleet, s, 1);
    assert_false(plan.ok());
    assert_non_null(std::strstr(plan.status.message.c_str(), "have 0 of 0"));
}

// create_data_files with a plan naming data servers that do not answer: every CREATE fails
// fast, nothing is reported as created, and nothing is left to remove (the CREATEs were
// never sent, so they cannot have run).
void test_create_fails_cleanly(void**) {
    fleet::Fleet fleet;
    for (std::uint64_t id = 1; id <= 2; ++id)
        assert_true(fleet.add(offline_fleet::offline_config(id)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));
    PlacementPlan plan;
    plan.file_id = 0x4d2;
    for (std::uint32_t m = 0; m < 2; ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = m + 1;
        df.name = "ff-00000000000004d2-m" + std::to_string(m);
        plan.files.push_back(df);
        plan.servers.push_back(fleet.find(df.ds_id));
    }
    assert_int_equal(plan.names().size(), 2);
    assert_string_equal(plan.planned()[1].name.c_str(), "ff-00000000000004d2-m1");

    PlacementSettings s;
    s.mirrors = 2;
    s.timeout = 500ms;
    const auto start = std::chrono::steady_clock::now();
    PlacementResult r = create_data_files(plan, s);
    assert_true(std::chrono::steady_clock::now() - start < 2s);
    assert_false(r.status.ok());
    print_message("%s\n", r.status.message.c_str());
    assert_non_null(std::strstr(r.status.message.c_str(), "CREATE"));
    assert_true(r.map.files.empty());
    assert_true(r.leftovers.empty());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fencing_ids),
        cmocka_unit_test(test_too_few_servers_is_refused),
        cmocka_unit_test(test_no_servers),
        cmocka_unit_test(test_create_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
