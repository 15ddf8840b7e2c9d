// SPDX-License-Identifier: LGPL-3.0-or-later
// The data-server client with nothing listening (fleet/data_server.hpp, fleet/fleet.hpp):
// argument checks, fail-fast while unreachable, health going Down, deadlines, stop.
// Uses a loopback port that was just free; no NFS server is needed.
#include "cmocka_cpp.hpp"
#include "fleet/fleet.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>

using namespace flexfiles::fleet;
using namespace std::chrono_literals;

namespace {

// An offline data server (testing/offline_fleet) with longer request and connect
// timeouts than the defaults.
DataServerConfig offline_config(std::uint64_t id) {
    return flexfiles::offline_fleet::offline_config(
        id, {.request_timeout = 2000ms, .connect_timeout = 500ms});
}

using flexfiles::offline_fleet::wait_until;

void test_config_validation(void**) {
    DataServerConfig c = offline_config(1);
    c.id = 0;
    assert_int_equal(static_cast<int>(c.validate().code),
                     static_cast<int>(DsErrc::invalid_argument));
    c = offline_config(1);
    c.export_path = "relative";
    auto st = c.validate();
    assert_int_equal(static_cast<int>(st.code), static_cast<int>(DsErrc::invalid_argument));
    assert_non_null(std::strstr(st.message.c_str(), "not absolute"));
    c = offline_config(1);
    c.backoff_max = 1ms;
    assert_false(c.validate().ok());
    assert_true(offline_config(1).validate().ok());
    auto started = DataServer::start(DataServerConfig{});
    assert_false(started.ok());
    assert_null(started.value.get());
}

void test_unreachable_goes_down_and_fails_fast(void**) {
    auto started = DataServer::start(offline_config(7));
    assert_true(started.ok());
    auto ds = started.value;
    assert_true(ds->deviceid() == make_deviceid(7));
    // Connection refused at every attempt: Down after 2 failed attempts.
    assert_true(wait_until([&] { return ds->health() == Health::down; }, 3000ms));
    auto t0 = Clock::now();
    auto r = ds->getattr(*DsFh::from_bytes("x", 1), deadline_in(2000ms)).get();
    auto took = Clock::now() - t0;
    assert_int_equal(static_cast<int>(r.status.code), static_cast<int>(DsErrc::unavailable));
    assert_true(took < 500ms); // fail fast, not at the deadline
    assert_non_null(std::strstr(r.status.message.c_str(), "ds 7"));
    auto c = ds->counters();
    assert_true(c.connect_failures >= 2);
    assert_int_equal(c.connects, 0);
    assert_int_equal(c.in_flight, 0);
    assert_true(c.errors >= 1);
    ds->stop();
    assert_true(ds->conn_state() == ConnState::stopped);
}

void test_invalid_arguments_inline(void**) {
    auto ds = DataServer::start(offline_config(8)).value;
    assert_non_null(ds.get());
    const char* bad_names[] = {"", ".", "..", "a/b"};
    for (const char* n : bad_names) {
        auto r = ds->remove(n).get();
        assert_int_equal(static_cast<int>(r.status.code),
                         static_cast<int>(DsErrc::invalid_argument));
    }
    auto r = ds->lookup(std::string(256, 'a')).get();
    assert_int_equal(static_cast<int>(r.status.code), static_cast<int>(DsErrc::invalid_argument));
    auto g = ds->getattr(DsFh{}).get();
    assert_int_equal(static_cast<int>(g.status.code), static_cast<int>(DsErrc::invalid_argument));
    auto w = ds->write(*DsFh::from_bytes("x", 1), 0, std::vector<std::uint8_t>((1u << 20) + 1),
                       StableHow::unstable)
                 .get();
    assert_int_equal(static_cast<int>(w.status.code), static_cast<int>(DsErrc::invalid_argument));
    assert_non_null(std::strstr(w.status.message.c_str(), "max_io_size"));
    auto rd = ds->read(*DsFh::from_bytes("x", 1), 0, (1u << 20) + 1).get();
    assert_int_equal(static_cast<int>(rd.status.code), static_cast<int>(DsErrc::invalid_argument));
    // A READ into a caller's buffer must fit it from where it starts.
    std::vector<std::uint8_t> buffer(4096);
    auto sink = std::make_shared<ReadSink>(buffer);
    auto ri = ds->read_into(*DsFh::from_bytes("x", 1), 0, 4096, sink, 1).get();
    assert_int_equal(static_cast<int>(ri.status.code), static_cast<int>(DsErrc::invalid_argument));
    assert_non_null(std::strstr(ri.status.message.c_str(), "does not fit the caller's 4096 bytes"));
    assert_false(DsFh::from_bytes("x", 0).has_value());
    std::uint8_t big[65] = {};
    assert_false(DsFh::from_bytes(big, 65).has_value());
    assert_true(DsFh::from_bytes(big, 64).has_value());
}

void test_stop_answers_everything(void**) {
    auto cfg = offline_config(9);
    cfg.connect_timeout = 5000ms;
    cfg.host = "127.0.0.1";
    auto ds = DataServer::start(cfg).value;
    ds->stop();
    std::atomic<int> answered{0};
    ds->null(deadline_in(1000ms), [&](DsResult<NullResult> r) {
        if (r.status.code == DsErrc::shutdown)
            ++answered;
    });
    assert_int_equal(answered.load(), 1); // inline, after stop
    ds->stop();                           // idempotent
}

void test_last_reference_dropped_in_callback(void**) {
    auto ds = DataServer::start(offline_config(12)).value;
    assert_true(wait_until([&] { return ds->health() == Health::down; }, 3000ms));
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::weak_ptr<DataServer> watch = ds;
    DataServer* raw = ds.get();
    // The callback (on the event thread) holds the only reference and drops it: the
    // DataServer is destroyed on its own event thread, which must neither deadlock nor crash.
    raw->null(deadline_in(1000ms), [keep = std::move(ds), done](DsResult<NullResult>) mutable {
        keep.reset();
        done->store(true);
    });
    assert_true(wait_until([&] { return done->load(); }, 2000ms));
    assert_true(watch.expired());
    std::this_thread::sleep_for(50ms); // let the detached event thread finish
}

void test_fleet_registry(void**) {
    Fleet f;
    assert_true(f.add(offline_config(3)).ok());
    assert_true(f.add(offline_config(1)).ok());
    assert_true(f.add(offline_config(2)).ok());
    auto dup = f.add(offline_config(2));
    assert_int_equal(static_cast<int>(dup.code), static_cast<int>(DsErrc::exists));
    auto badcfg = offline_config(4);
    badcfg.host.clear();
    assert_int_equal(static_cast<int>(f.add(badcfg).code),
                     static_cast<int>(DsErrc::invalid_argument));
    assert_int_equal(f.size(), 3);
    auto all = f.servers();
    assert_int_equal(all[0]->id(), 1);
    assert_int_equal(all[2]->id(), 3);
    assert_true(f.find(2) != nullptr);
    assert_true(f.find(make_deviceid(2)) == f.find(2));
    assert_null(f.find(make_deviceid(2, 9)).get()); // other fsal_id
    assert_null(f.find(99).get());
    assert_true(f.set_drained(2, true).ok());
    assert_true(f.find(2)->drained());
    assert_int_equal(static_cast<int>(f.set_drained(99, true).code),
                     static_cast<int>(DsErrc::not_found));
    // Nothing is Up: placement refuses, for now (the data servers may come back).
    auto p = f.place(1);
    assert_int_equal(static_cast<int>(p.status.code),
                     static_cast<int>(DsErrc::servers_unavailable));
    auto held = f.find(3);
    assert_true(f.remove(3).ok());
    assert_int_equal(static_cast<int>(f.remove(3).code), static_cast<int>(DsErrc::not_found));
    // A removed server still held by someone answers with shutdown.
    auto r = held->null().get();
    assert_int_equal(static_cast<int>(r.status.code), static_cast<int>(DsErrc::shutdown));
    auto snap = f.snapshot();
    assert_int_equal(snap.size(), 2);
    assert_true(snap[1].drained);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_unreachable_goes_down_and_fails_fast),
        cmocka_unit_test(test_invalid_arguments_inline),
        cmocka_unit_test(test_stop_answers_everything),
        cmocka_unit_test(test_last_reference_dropped_in_callback),
        cmocka_unit_test(test_fleet_registry),
    };
    return cmocka_run_group_tests_name("fleet_offline", tests, nullptr, nullptr);
}
