// SPDX-License-Identifier: LGPL-3.0-or-later
// The resilverer (fsal_flexfiles/mds/resilver.hpp) without data servers: when it must not
// copy (an RW layout out, a write in flight, the stale mirror's data server not Up, no
// in-sync source), it waits and says why; it copies nothing and clears nothing.
#include "cmocka_cpp.hpp"
#include "mds/resilver.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <unistd.h>

using namespace flexfiles;
using namespace flexfiles::mds;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const ObjectKey kKey{0x42};

DataFileMap two_mirrors() {
    DataFileMap map;
    map.file_id = 77;
    for (std::uint32_t m = 0; m < 2; ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = m + 1;
        df.deviceid = fleet::make_deviceid(df.ds_id);
        df.fh = {9, 9, static_cast<std::uint8_t>(m)};
        df.name = "ff-000000000000004d-m" + std::to_string(m);
        map.files.push_back(df);
    }
    return map;
}

// A layout store in a fresh directory holding file 77 (two mirrors) with mirror 0 marked
// stale; the directory goes with it.
struct MarkedStore {
    explicit MarkedStore(const std::string& name)
        : dir(fs::temp_directory_path() / (name + "-" + std::to_string(getpid()))),
          store(open_fresh(dir)), stale(*store) {
        assert_true(store->put(kKey, two_mirrors()).ok());
        assert_true(stale.mark(kKey, 77, 2, {0}, "WRITE failed").ok());
    }
    ~MarkedStore() { fs::remove_all(dir); }

    static std::unique_ptr<LayoutStore> open_fresh(const fs::path& dir) {
        fs::remove_all(dir);
        auto opened = LayoutStore::open((dir / "layouts.db").string());
        assert_true(opened.ok());
        return std::move(opened.value);
    }

    fs::path dir;
    std::unique_ptr<LayoutStore> store;
    StaleMirrors stale;
};

void test_waits_and_says_why(void**) {
    MarkedStore marked("ff-resilver");
    LayoutStore& store = *marked.store;
    StaleMirrors& stale = marked.stale;

    fleet::Fleet fleet;
    assert_true(fleet.add(offline_fleet::offline_config(1)).ok());
    assert_true(fleet.add(offline_fleet::offline_config(2)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));

    bool rw_out = true;
    ResilverHooks hooks;
    hooks.rw_layout_outstanding = [&](std::uint64_t file) { return file == 77 && rw_out; };
    ResilverSettings settings;
    settings.tick = 10ms;
    std::mutex log_mu;
    std::vector<std::string> logged;
    Resilverer resilver(store, stale, fleet, hooks, settings,
                        [&](fleet::LogLevel, std::string_view line) {
                            std::lock_guard lk(log_mu);
                            logged.emplace_back(line);
                        });
    const StaleMirror mark = stale.list().at(0);
    std::string why;

    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)),
                     static_cast<int>(ResilverOutcome::waiting));
    assert_non_null(std::strstr(why.c_str(), "file 77 mirror 0"));
    assert_non_null(std::strstr(why.c_str(), "RW layouts to be returned"));

    rw_out = false;
    {
        WriteBracket write(&stale, 77);
        assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)),
                         static_cast<int>(ResilverOutcome::waiting));
        assert_non_null(std::strstr(why.c_str(), "writes in flight"));
    }
    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)),
                     static_cast<int>(ResilverOutcome::waiting));
    assert_non_null(std::strstr(why.c_str(), "to be Up"));

    // A mark of a file the store no longer has (removed meanwhile).
    StaleMirror gone = mark;
    gone.key = ObjectKey{0x43};
    assert_int_equal(static_cast<int>(resilver.resilver(gone, &why)),
                     static_cast<int>(ResilverOutcome::waiting));
    assert_non_null(std::strstr(why.c_str(), "has no mirror 0 any more"));

    const ResilverCounters c = resilver.counters();
    assert_int_equal(c.attempts, 0);
    assert_int_equal(c.resilvered, 0);
    assert_int_equal(stale.count(), 1);
    assert_int_equal(store.stale_mirrors().value.size(), 1);

    // The thread passes over the mark every tick, says once why it waits, and stops cleanly
    // with the mark still waiting.
    resilver.start();
    std::this_thread::sleep_for(200ms);
    resilver.stop();
    {
        std::lock_guard lk(log_mu);
        assert_int_equal(logged.size(), 1);
        assert_non_null(std::strstr(logged[0].c_str(), "resilver: file 77 mirror 0"));
        assert_non_null(std::strstr(logged[0].c_str(), "to be Up"));
    }
    assert_int_equal(stale.count(), 1);
}

// RW layouts waited on for recall_after are recalled, then again every recall_after while
// they stay out; the wait starts over once none is out.
void test_recalls_rw_layouts_it_waits_on(void**) {
    MarkedStore marked("ff-resilver-recall");
    LayoutStore& store = *marked.store;
    StaleMirrors& stale = marked.stale;
    fleet::Fleet fleet;

    bool rw_out = true;
    std::vector<std::uint64_t> recalled;
    ResilverHooks hooks;
    hooks.rw_layout_outstanding = [&](std::uint64_t file) { return file == 77 && rw_out; };
    hooks.recall_rw_layouts = [&](const StaleMirror& m) { recalled.push_back(m.file_id); };
    ResilverSettings settings;
    settings.recall_after = 100ms;
    Resilverer resilver(store, stale, fleet, hooks, settings, nullptr);
    const StaleMirror mark = stale.list().at(0);
    std::string why;
    const auto waiting = static_cast<int>(ResilverOutcome::waiting);

    // The wait begins: nothing recalled yet.
    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)), waiting);
    assert_true(recalled.empty());
    assert_null(std::strstr(why.c_str(), "recall"));
    std::this_thread::sleep_for(120ms);
    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)), waiting);
    assert_int_equal(recalled.size(), 1);
    assert_int_equal(recalled[0], 77);
    assert_non_null(std::strstr(why.c_str(), "RW layouts to be returned"));
    assert_non_null(std::strstr(why.c_str(), "recalled them"));
    // Not again before another recall_after.
    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)), waiting);
    assert_int_equal(recalled.size(), 1);
    std::this_thread::sleep_for(120ms);
    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)), waiting);
    assert_int_equal(recalled.size(), 2);
    assert_int_equal(resilver.counters().recalls, 2);

    // Returned: the next RW layout starts a new wait.
    rw_out = false;
    resilver.resilver(mark, &why);
    rw_out = true;
    assert_int_equal(static_cast<int>(resilver.resilver(mark, &why)), waiting);
    assert_int_equal(recalled.size(), 2);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits_and_says_why),
        cmocka_unit_test(test_recalls_rw_layouts_it_waits_on),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
