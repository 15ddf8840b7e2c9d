// SPDX-License-Identifier: LGPL-3.0-or-later
// Whose data files a create may replace and the reaper may remove (issue #13, item 1):
//   * a create may replace a data file that already exists under a name it plans only when
//     this export's layout store records that name on that data server as its own leftover
//     (queued for removal); a name the store maps for a live file, or does not know, is a
//     collision the create must leave alone;
//   * the reaper never removes a data file whose name carries another identity, a name it
//     could not have made, or an old-form name whose filehandle it does not know; it drops
//     such removals from its queue without sending anything to the data server; on a
//     namespace several MDSs share, another identity's data file known by its filehandle
//     (from a map of the namespace) is removed.
#include "cmocka_cpp.hpp"
#include "fresh_store.hpp"
#include "mds/placement_at_create.hpp"
#include "mds/reaper.hpp"
#include "model/naming.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <cstring>
#include <filesystem>
#include <mutex>
#include <unistd.h>

using namespace flexfiles;
using namespace flexfiles::mds;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<LayoutStore> fresh_store(const char* name) {
    return ::fresh_store("ff-mds-namespace", name);
}

PendingRemoval removal(std::uint64_t ds_id, const std::string& name,
                       std::vector<std::uint8_t> fh = {1, 2, 3, 4}) {
    PendingRemoval r;
    r.ds_id = ds_id;
    r.name = name;
    r.fh = std::move(fh);
    r.file_id = 77;
    r.next_attempt_ms = wall_clock_ms();
    return r;
}

int outcome(const RemovalAttempt& a) {
    return static_cast<int>(a.outcome);
}

void test_only_recorded_leftovers_are_replaceable(void**) {
    auto store = fresh_store("replaceable");
    const std::uint64_t me = store->identity();
    const std::string n0 = fleet::data_file_name(me, 0x4d2, 0);
    const std::string n1 = fleet::data_file_name(me, 0x4d2, 1);
    const std::string n2 = fleet::data_file_name(me, 0x4d2, 2);
    // n0 on data server 1 is queued for removal (a former file of the same fileid, or a
    // create a crash interrupted): this export's own leftover.
    assert_true(store->queue_removals({removal(1, n0)}).ok());
    // n1 on data server 2 is in a live file's map.
    DataFileMap live;
    live.file_id = 0x4d2;
    DataFile df;
    df.ds_id = 2;
    df.name = n1;
    df.fh = {7};
    live.files.push_back(df);
    assert_true(store->put(ObjectKey{0x01}, live).ok());
    // n0 queued on data server 1 says nothing about data server 3.
    const std::vector<PlannedDataFile> planned{{1, n0}, {2, n1}, {3, n2}, {3, n0}};

    auto r = take_over_leftovers(*store, planned);
    assert_true(r.ok());
    assert_int_equal(r.value.size(), 4);
    assert_true(r.value[0]);  // recorded as ours: may be replaced
    assert_false(r.value[1]); // a live file's: a collision
    assert_false(r.value[2]); // unknown: a collision
    assert_false(r.value[3]); // that name, but queued on another data server
    // The create takes the name over: its queued removal is gone.
    assert_int_equal(store->pending_removal_count().value, 0);
    // Once taken over, a second look finds nothing to replace.
    assert_false(take_over_leftovers(*store, planned).value[0]);
}

void test_reaper_leaves_other_exports_data_files_alone(void**) {
    auto store = fresh_store("foreign");
    const std::uint64_t me = store->identity();
    const std::uint64_t other = me ^ 0x5a5a5a5a5a5a5a5aull;
    fleet::Fleet fleet;
    assert_true(fleet.add(offline_fleet::offline_config(1)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));
    std::mutex mu;
    std::vector<std::string> lines;
    ReaperSettings s;
    s.request_timeout = 300ms;
    s.backoff_initial = 10000ms;
    Reaper reaper(*store, fleet, s, [&](fleet::LogLevel, std::string_view m) {
        std::lock_guard lk(mu);
        lines.emplace_back(m);
    });

    const auto queued =
        store
            ->queue_removals({
                removal(1, fleet::data_file_name(other, 0x4d, 0)),     // another export's
                removal(1, "not-a-data-file"),                         // never made by us
                removal(1, fleet::legacy_data_file_name(0x4d, 0), {}), // old form, fh unknown
                removal(1, fleet::data_file_name(me, 0x4d, 1), {}),    // ours (interrupted)
                removal(1, fleet::legacy_data_file_name(0x4d, 1)),     // old form, fh known
            })
            .value;
    const auto requests_before = fleet.find(1)->counters().requests;
    const auto attempts = reaper.remove_now(queued);
    assert_int_equal(attempts.size(), 5);
    for (int i = 0; i < 3; ++i) {
        print_message("%s: %s\n", attempts[i].removal.name.c_str(), attempts[i].error.c_str());
        assert_int_equal(outcome(attempts[i]), static_cast<int>(RemovalOutcome::not_ours));
    }
    // Ours, and an old-form name whose filehandle proves it ours, are tried (and fail: the
    // data server does not answer), so they stay queued.
    assert_int_equal(outcome(attempts[3]), static_cast<int>(RemovalOutcome::failed));
    assert_int_equal(outcome(attempts[4]), static_cast<int>(RemovalOutcome::failed));
    // Nothing was sent for the three that are not ours; they left the queue.
    const auto all = store->all_removals().value;
    assert_int_equal(all.size(), 2);
    assert_string_equal(all[0].name.c_str(), fleet::data_file_name(me, 0x4d, 1).c_str());
    assert_int_equal(reaper.counters().not_ours, 3);
    assert_int_equal(reaper.counters().attempts, 2);
    assert_true(fleet.find(1)->counters().requests - requests_before <= 2);
    std::lock_guard lk(mu);
    bool logged = false;
    for (const auto& l : lines)
        logged |= l.find("not this export's") != std::string::npos &&
                  l.find(fleet::data_file_name(other, 0x4d, 0)) != std::string::npos;
    assert_true(logged);
}

// Several MDSs on one namespace (Map_In_Namespace): a data file of another identity came
// from a map of the namespace when its filehandle is known, and is removed; without a
// filehandle (an interrupted create's guess) it is still left alone.
void test_shared_namespace_removes_other_mdss_mapped_data_files(void**) {
    const std::uint64_t me = 0x1111;
    const std::uint64_t other = 0x2222;
    const PendingRemoval mapped = removal(1, fleet::data_file_name(other, 0x4d, 0));
    const PendingRemoval guessed = removal(1, fleet::data_file_name(other, 0x4d, 1), {});
    std::string why;
    assert_true(removal_is_ours(mapped, me, true, &why));
    assert_false(removal_is_ours(guessed, me, true, &why));
    assert_false(removal_is_ours(mapped, me, false, &why)); // one MDS: never another's
    assert_non_null(strstr(why.c_str(), "not this export's"));
    assert_false(removal_is_ours(removal(1, "not-a-data-file"), me, true, &why));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_recorded_leftovers_are_replaceable),
        cmocka_unit_test(test_shared_namespace_removes_other_mdss_mapped_data_files),
        cmocka_unit_test(test_reaper_leaves_other_exports_data_files_alone),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
