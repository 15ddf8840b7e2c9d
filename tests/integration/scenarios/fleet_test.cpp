// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The data-server fleet (fsal_flexfiles/fleet) against real NFSv3 data servers: three
// ganesha.nfsd (FSAL VFS, NFSv3 only) started by the harness's Cluster. No MDS is needed:
// the fleet is what the MDS uses to reach the data servers.
//
// Checks: the full operation set with post-op attributes, 200 concurrent requests from 4
// threads, placement over live servers, a frozen server (SIGSTOP) timing requests out by
// their deadline and going Suspect then Down and Up again after SIGCONT, and a restarted
// server being reconnected.
#include "ff_harness/harness.hpp"
#include "fleet/fleet.hpp"
#include "model/naming.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <mutex>
#include <sys/stat.h>
#include <thread>

using namespace flexfiles::fleet;
using namespace std::chrono_literals;
namespace harness = flexfiles::harness;
namespace offline_fleet = flexfiles::offline_fleet;

namespace {

// Short timings so that failure detection fits in a test (longer than the defaults of
// testing/offline_fleet, which are for data servers nobody answers for).
constexpr offline_fleet::Timings kTimings{.request_timeout = 3000ms,
                                          .connect_timeout = 1000ms,
                                          .probe_interval = 200ms,
                                          .probe_timeout = 200ms,
                                          .down_after = 3,
                                          .backoff_initial = 50ms,
                                          .backoff_max = 400ms};

DataServerConfig config_for(const harness::DataServerInfo& info) {
    DataServerConfig c;
    c.id = info.index + 1;
    c.host = info.address;
    c.export_path = info.export_path.string();
    c.nfs_port = info.nfs_port;
    c.mount_port = info.mnt_port;
    offline_fleet::apply(kTimings, c);
    c.log = [](LogLevel lvl, std::string_view msg) {
        if (lvl >= LogLevel::info)
            std::fprintf(stderr, "fleet: %.*s\n", static_cast<int>(msg.size()), msg.data());
    };
    return c;
}

using offline_fleet::wait_until;

// NAME on `d`, created afresh (mode 0644): a leftover of an earlier run is removed first.
DsResult<CreateResult> create_afresh(DataServer& d, const std::string& name) {
    (void)d.remove(name).get();
    CreateArgs ca;
    ca.name = name;
    ca.attrs.mode = 0644;
    return d.create(ca).get();
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
    return v;
}

// kill(SIGSTOP) returns before every thread of the target has stopped; wait until
// /proc says all of them are (state 'T'), so no request is answered after this returns.
bool wait_all_threads_stopped(pid_t pid, std::chrono::milliseconds limit) {
    namespace fs = std::filesystem;
    return wait_until(
        [&] {
            std::error_code ec;
            const fs::path tasks = "/proc/" + std::to_string(pid) + "/task";
            bool any = false;
            for (const auto& t : fs::directory_iterator(tasks, ec)) {
                std::ifstream f(t.path() / "stat");
                std::string line;
                std::getline(f, line);
                auto close = line.rfind(')');
                if (close == std::string::npos || close + 2 >= line.size())
                    return false;
                char state = line[close + 2];
                if (state != 'T' && state != 't')
                    return false;
                any = true;
            }
            return any && !ec;
        },
        limit);
}

// A data file's bytes as the data server stored them, read from its export directory.
std::vector<std::uint8_t> bytes_on_disk(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A test's bytes lent to a WRITE (they outlive it).
std::shared_ptr<WriteSource> lend(const std::vector<std::uint8_t>& bytes) {
    return std::make_shared<WriteSource>(std::span<const std::uint8_t>(bytes));
}

std::string what(const DsStatus& st) {
    return std::string(to_string(st.code)) + ": " + st.message;
}

class FleetTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        harness::ClusterOptions o;
        o.data_servers = 3;
        o.start_mds = false;
        cluster_ = std::make_unique<harness::Cluster>(o);
    }
    static void TearDownTestSuite() { cluster_.reset(); }

    void SetUp() override {
        // A test that froze or stopped a server must not leave it that way for the next.
        for (unsigned i = 0; i < cluster_->ds_count(); ++i) {
            auto& s = cluster_->ds(i);
            s.signal(SIGCONT);
            if (!s.running())
                s.start();
        }
        for (const auto& info : cluster_->ds_info())
            ASSERT_TRUE(fleet_.add(config_for(info)).ok());
        for (const auto& ds : fleet_.servers())
            ASSERT_TRUE(wait_until([&] { return ds->health() == Health::up; }, 5000ms))
                << ds->label() << " never came Up";
    }

    std::shared_ptr<DataServer> ds(unsigned index) { return fleet_.find(index + 1); }

    // A data file created afresh (mode 0644) on data server `index`.
    struct TestFile {
        std::shared_ptr<DataServer> d;
        std::string name;
        DsFh fh;
        std::filesystem::path on_disk; // in the data server's export directory
    };
    void create_test_file(unsigned index, std::uint64_t file_id, TestFile& out) {
        out.d = ds(index);
        out.name = legacy_data_file_name(file_id, 0);
        auto cr = create_afresh(*out.d, out.name);
        ASSERT_TRUE(cr.ok()) << what(cr.status);
        out.fh = cr.value.fh;
        out.on_disk = cluster_->ds_info()[index].export_path / out.name;
    }

    static std::unique_ptr<harness::Cluster> cluster_;
    Fleet fleet_;
};

std::unique_ptr<harness::Cluster> FleetTest::cluster_;

TEST_F(FleetTest, RoundTripWithPostOpAttributes) {
    auto d = ds(0);
    const std::string name = legacy_data_file_name(0x1234, 0);
    (void)d->remove(name).get(); // leftover from an earlier run

    CreateArgs ca;
    ca.name = name;
    ca.mode = CreateMode::guarded;
    ca.attrs.mode = 0640;
    ca.attrs.uid = 1234;
    ca.attrs.gid = 567;
    auto cr = d->create(ca).get();
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    ASSERT_FALSE(cr.value.fh.empty());
    ASSERT_TRUE(cr.value.attrs.has_value());
    EXPECT_EQ(cr.value.attrs->mode, 0640u);
    EXPECT_EQ(cr.value.attrs->uid, 1234u);
    EXPECT_EQ(cr.value.attrs->gid, 567u);
    EXPECT_EQ(cr.value.attrs->size, 0u);
    EXPECT_EQ(cr.value.attrs->type, flexfiles::nfs3::Ftype::reg);
    const DsFh fh = cr.value.fh;

    // Guarded create of an existing name: NFS3ERR_EXIST (17), named in the message.
    auto again = d->create(ca).get();
    EXPECT_EQ(again.status.code, DsErrc::nfs);
    EXPECT_EQ(again.status.nfs3, 17u);
    EXPECT_NE(again.status.message.find("NFS3ERR_EXIST"), std::string::npos);
    EXPECT_NE(again.status.message.find(name), std::string::npos);

    // The file is where an operator would look for it, with the owner we asked for.
    const auto on_disk = cluster_->ds_info()[0].export_path / name;
    struct stat st {};
    ASSERT_EQ(::stat(on_disk.c_str(), &st), 0) << on_disk;
    EXPECT_EQ(st.st_uid, 1234u);

    auto a = pattern(64 * 1024, 1);
    auto w1 = d->write(fh, 0, a, StableHow::unstable).get();
    ASSERT_TRUE(w1.ok()) << what(w1.status);
    EXPECT_EQ(w1.value.count, a.size());
    ASSERT_TRUE(w1.value.attrs.has_value());
    EXPECT_EQ(w1.value.attrs->size, a.size());
    EXPECT_EQ(w1.value.attrs->uid, 1234u);

    auto b = pattern(4096, 9);
    auto w2 = d->write(fh, a.size(), b, StableHow::file_sync).get();
    ASSERT_TRUE(w2.ok()) << what(w2.status);
    EXPECT_EQ(w2.value.committed, StableHow::file_sync);
    ASSERT_TRUE(w2.value.attrs.has_value());
    EXPECT_EQ(w2.value.attrs->size, a.size() + b.size());
    EXPECT_GT(w2.value.attrs->used, 0u); // space_used: data reached the disk
    EXPECT_GE(w2.value.attrs->mtime, w1.value.attrs->mtime);
    EXPECT_EQ(w2.value.verifier, w1.value.verifier); // same server instance

    auto r = d->read(fh, 0, static_cast<std::uint32_t>(a.size() + b.size() + 100)).get();
    ASSERT_TRUE(r.ok()) << what(r.status);
    EXPECT_TRUE(r.value.eof);
    ASSERT_EQ(r.value.data.size(), a.size() + b.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), r.value.data.begin()));
    EXPECT_TRUE(std::equal(b.begin(), b.end(), r.value.data.begin() + a.size()));
    ASSERT_TRUE(r.value.attrs.has_value());
    EXPECT_EQ(r.value.attrs->size, a.size() + b.size());

    // The same bytes straight into a caller's buffer, from where the reply starts in it
    // (a proxied READ's way): the first 100 bytes stay as they were.
    std::vector<std::uint8_t> buffer(100 + b.size() + 50, 0xee);
    auto sink = std::make_shared<ReadSink>(buffer);
    auto ri =
        d->read_into(fh, a.size(), static_cast<std::uint32_t>(b.size() + 50), sink, 100).get();
    ASSERT_TRUE(ri.ok()) << what(ri.status);
    EXPECT_TRUE(ri.value.eof);
    EXPECT_EQ(ri.value.placed, b.size());
    EXPECT_TRUE(ri.value.data.empty());
    EXPECT_TRUE(
        std::all_of(buffer.begin(), buffer.begin() + 100, [](auto v) { return v == 0xee; }));
    EXPECT_TRUE(std::equal(b.begin(), b.end(), buffer.begin() + 100));
    ASSERT_TRUE(ri.value.attrs.has_value());
    EXPECT_EQ(ri.value.attrs->size, a.size() + b.size());

    auto c = d->commit(fh, 0, 0).get();
    ASSERT_TRUE(c.ok()) << what(c.status);
    EXPECT_EQ(c.value.verifier, w1.value.verifier);
    ASSERT_TRUE(c.value.attrs.has_value());
    EXPECT_EQ(c.value.attrs->size, a.size() + b.size());

    auto g = d->getattr(fh).get();
    ASSERT_TRUE(g.ok()) << what(g.status);
    EXPECT_EQ(g.value.size, a.size() + b.size());
    EXPECT_EQ(g.value.mtime, w2.value.attrs->mtime);
    EXPECT_EQ(g.value.ctime, c.value.attrs->ctime);

    // Fencing-style ownership change, then a truncate.
    SetAttrs chown;
    chown.uid = 4321;
    chown.gid = 765;
    auto s1 = d->setattr(fh, chown).get();
    ASSERT_TRUE(s1.ok()) << what(s1.status);
    ASSERT_TRUE(s1.value.attrs.has_value());
    EXPECT_EQ(s1.value.attrs->uid, 4321u);
    EXPECT_EQ(s1.value.attrs->gid, 765u);
    EXPECT_GE(s1.value.attrs->ctime, g.value.ctime);
    SetAttrs trunc;
    trunc.size = 100;
    trunc.mode = 0600;
    auto s2 = d->setattr(fh, trunc).get();
    ASSERT_TRUE(s2.ok()) << what(s2.status);
    EXPECT_EQ(s2.value.attrs->size, 100u);
    EXPECT_EQ(s2.value.attrs->mode, 0600u);
    auto g2 = d->getattr(fh).get();
    ASSERT_TRUE(g2.ok());
    EXPECT_EQ(g2.value.uid, 4321u);
    EXPECT_EQ(g2.value.size, 100u);
    ASSERT_EQ(::stat(on_disk.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 4321u);
    EXPECT_EQ(st.st_size, 100);

    auto l = d->lookup(name).get();
    ASSERT_TRUE(l.ok()) << what(l.status);
    EXPECT_EQ(l.value.fh, fh);
    ASSERT_TRUE(l.value.attrs.has_value());
    EXPECT_EQ(l.value.attrs->fileid, g2.value.fileid);

    auto rm = d->remove(name).get();
    ASSERT_TRUE(rm.ok()) << what(rm.status);
    auto gone = d->lookup(name).get();
    EXPECT_EQ(gone.status.code, DsErrc::nfs);
    EXPECT_EQ(gone.status.nfs3, 2u); // NOENT
    auto stale = d->getattr(fh).get();
    EXPECT_EQ(stale.status.code, DsErrc::nfs); // STALE
    EXPECT_FALSE(std::filesystem::exists(on_disk));
}

TEST_F(FleetTest, ExclusiveCreateIsIdempotentAndSetsAttributes) {
    auto d = ds(1);
    const std::string name = legacy_data_file_name(0xabcdef, 2);
    (void)d->remove(name).get();
    CreateArgs ca;
    ca.name = name;
    ca.mode = CreateMode::exclusive;
    ca.verifier = {1, 2, 3, 4, 5, 6, 7, 8};
    ca.attrs.mode = 0604;
    ca.attrs.uid = 2000;
    ca.attrs.gid = 2001;
    auto first = d->create(ca).get();
    ASSERT_TRUE(first.ok()) << what(first.status);
    ASSERT_TRUE(first.value.attrs.has_value());
    EXPECT_EQ(first.value.attrs->mode, 0604u);
    EXPECT_EQ(first.value.attrs->uid, 2000u);
    EXPECT_EQ(first.value.attrs->gid, 2001u);

    // A retransmission (same verifier) succeeds with the same file.
    auto retry = d->create(ca).get();
    ASSERT_TRUE(retry.ok()) << what(retry.status);
    EXPECT_EQ(retry.value.fh, first.value.fh);

    // Another creator (other verifier) is refused.
    ca.verifier = {9, 9, 9, 9, 9, 9, 9, 9};
    auto other = d->create(ca).get();
    EXPECT_EQ(other.status.code, DsErrc::nfs);
    EXPECT_EQ(other.status.nfs3, 17u);
    EXPECT_TRUE(d->remove(name).get().ok());
}

TEST_F(FleetTest, TwoHundredConcurrentRequestsFromFourThreads) {
    // One data file per data server, then 4 threads x 50 requests spread over them.
    std::vector<DsFh> fhs;
    for (unsigned i = 0; i < 3; ++i) {
        auto d = ds(i);
        std::string name = legacy_data_file_name(0x200 + i, 0);
        auto cr = create_afresh(*d, name);
        ASSERT_TRUE(cr.ok()) << what(cr.status);
        fhs.push_back(cr.value.fh);
    }
    std::vector<std::uint64_t> before;
    for (unsigned i = 0; i < 3; ++i)
        before.push_back(ds(i)->counters().requests);

    // Callback form: each completion is counted on the event threads. The tally is shared
    // with the callbacks so that a failed assertion cannot leave them a dangling reference.
    struct Tally {
        std::atomic<int> ok{0}, failed{0}, done{0};
        std::mutex mu;
        std::string first_error;
        void record(const DsStatus& st) {
            if (st.ok()) {
                ++ok;
            } else {
                ++failed;
                std::lock_guard lk(mu);
                if (first_error.empty())
                    first_error = what(st);
            }
            ++done;
        }
    };
    auto tally = std::make_shared<Tally>();
    std::vector<std::thread> threads;
    auto t0 = Clock::now();
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t, tally] {
            for (int k = 0; k < 50; ++k) {
                unsigned i = static_cast<unsigned>(t + k) % 3;
                auto d = ds(i);
                auto dl = deadline_in(5000ms);
                switch (k % 3) {
                case 0:
                    d->getattr(fhs[i], dl,
                               [tally](DsResult<DsAttrs> r) { tally->record(r.status); });
                    break;
                case 1:
                    d->write(fhs[i], static_cast<std::uint64_t>(t * 50 + k) * 512,
                             pattern(512, static_cast<std::uint8_t>(k)), StableHow::unstable, dl,
                             [tally](DsResult<WriteResult> r) { tally->record(r.status); });
                    break;
                default:
                    d->read(fhs[i], 0, 4096, dl,
                            [tally](DsResult<ReadResult> r) { tally->record(r.status); });
                    break;
                }
            }
        });
    }
    for (auto& th : threads)
        th.join();
    // Every request completes by its deadline (5 s), one way or the other.
    ASSERT_TRUE(wait_until([&] { return tally->done.load() == 200; }, 6000ms))
        << tally->done.load();
    auto took = Clock::now() - t0;
    EXPECT_EQ(tally->ok.load(), 200) << tally->first_error;
    EXPECT_EQ(tally->failed.load(), 0) << tally->first_error;
    std::uint64_t added = 0;
    for (unsigned i = 0; i < 3; ++i) {
        added += ds(i)->counters().requests - before[i];
        EXPECT_EQ(ds(i)->in_flight(), 0u);
        EXPECT_EQ(ds(i)->health(), Health::up);
    }
    EXPECT_EQ(added, 200u);
    EXPECT_LT(took, 5000ms);
    std::fprintf(stderr, "200 requests from 4 threads: %lld ms\n",
                 static_cast<long long>(
                     std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
    for (unsigned i = 0; i < 3; ++i)
        EXPECT_TRUE(ds(i)->remove(legacy_data_file_name(0x200 + i, 0)).get().ok());
}

TEST_F(FleetTest, PlacementOverLiveServers) {
    for (int n = 0; n < 6; ++n) {
        auto p = fleet_.place(2);
        ASSERT_TRUE(p.ok()) << what(p.status);
        ASSERT_EQ(p.value.size(), 2u);
        EXPECT_NE(p.value[0]->id(), p.value[1]->id());
    }
    ASSERT_TRUE(fleet_.set_drained(2, true).ok());
    auto three = fleet_.place(3);
    EXPECT_EQ(three.status.code, DsErrc::too_few_servers);
    for (int n = 0; n < 4; ++n) {
        auto p = fleet_.place(2);
        ASSERT_TRUE(p.ok());
        for (const auto& d : p.value)
            EXPECT_NE(d->id(), 2u);
    }
    ASSERT_TRUE(fleet_.set_drained(2, false).ok());
    EXPECT_TRUE(fleet_.place(3).ok());
    // deviceid lookups find the same objects.
    for (const auto& d : fleet_.servers())
        EXPECT_EQ(fleet_.find(d->deviceid()), d);
}

TEST_F(FleetTest, LargeIoUpToMaxIoSize) {
    auto d = ds(2);
    const std::string name = legacy_data_file_name(0x1a, 0);
    auto cr = create_afresh(*d, name);
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    const std::uint32_t max = d->config().max_io_size;
    auto data = pattern(max, 3);
    auto w = d->write(cr.value.fh, 0, data, StableHow::file_sync).get();
    ASSERT_TRUE(w.ok()) << what(w.status);
    EXPECT_EQ(w.value.count, max);
    auto r = d->read(cr.value.fh, 0, max).get();
    ASSERT_TRUE(r.ok()) << what(r.status);
    EXPECT_EQ(r.value.data, data);
    auto too_big = d->write(cr.value.fh, 0, pattern(max + 1, 0), StableHow::unstable).get();
    EXPECT_EQ(too_big.status.code, DsErrc::invalid_argument);
    EXPECT_TRUE(d->remove(name).get().ok());
}

TEST_F(FleetTest, WrongExportPathIsReportedAndNeverUp) {
    auto cfg = config_for(cluster_->ds_info()[0]);
    cfg.id = 10;
    cfg.export_path = "/no/such/export";
    ASSERT_TRUE(fleet_.add(cfg).ok());
    auto d = fleet_.find(10);
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::down; }, 3000ms));
    auto r = d->null(deadline_in(1000ms)).get();
    EXPECT_EQ(r.status.code, DsErrc::unavailable);
    EXPECT_NE(r.status.message.find("MNT /no/such/export"), std::string::npos) << r.status.message;
    EXPECT_EQ(d->counters().connects, 0u);
    EXPECT_GE(d->counters().connect_failures, 3u);
    // The others are unaffected and placement ignores it.
    EXPECT_TRUE(fleet_.place(3).ok());
}

TEST_F(FleetTest, ServerRejectingNfsGoesDownAndBacksOff) {
    // NFS calls sent to the MOUNT port: the server answers, but "program not available".
    auto cfg = config_for(cluster_->ds_info()[1]);
    cfg.id = 11;
    cfg.nfs_port = cfg.mount_port;
    ASSERT_TRUE(fleet_.add(cfg).ok());
    auto d = fleet_.find(11);
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::down; }, 3000ms));
    auto r = d->null(deadline_in(1000ms)).get();
    EXPECT_TRUE(r.status.code == DsErrc::rpc || r.status.code == DsErrc::unavailable)
        << what(r.status);
    // Each new connection is probed once and dropped; the delays between them grow
    // (50, 100, 200, 400, 400 ms ...) instead of reconnecting every 50 ms.
    auto before = d->counters().connects;
    std::this_thread::sleep_for(2000ms);
    auto made = d->counters().connects - before;
    EXPECT_GE(made, 2u);
    EXPECT_LE(made, 10u);
    EXPECT_EQ(d->health(), Health::down);
}

TEST_F(FleetTest, PastDeadlineFailsWithoutBlamingTheServer) {
    auto d = ds(1);
    auto r = d->null(Clock::now() - 1ms).get();
    EXPECT_EQ(r.status.code, DsErrc::timeout);
    EXPECT_EQ(d->health(), Health::up); // never sent: not the server's fault
    EXPECT_EQ(d->counters().timeouts, 1u);
    EXPECT_TRUE(d->null().get().ok());
}

TEST_F(FleetTest, FrozenServerTimesOutGoesDownAndComesBack) {
    auto d = ds(0);
    auto& server = cluster_->ds(0);
    ASSERT_TRUE(d->getattr(*DsFh::from_bytes("\x01", 1)).get().status.code == DsErrc::nfs)
        << "a bogus handle should get an NFS error while the server runs";

    ASSERT_TRUE(server.signal(SIGSTOP));
    ASSERT_TRUE(wait_all_threads_stopped(server.pid(), 2000ms));
    // Requests in flight time out by their deadline, not later.
    std::vector<std::future<DsResult<NullResult>>> futs;
    auto t0 = Clock::now();
    for (int i = 0; i < 5; ++i)
        futs.push_back(d->null(t0 + 300ms));
    for (auto& f : futs) {
        auto r = f.get();
        EXPECT_EQ(r.status.code, DsErrc::timeout) << what(r.status);
    }
    auto took = Clock::now() - t0;
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 500ms);             // the deadline plus scheduling slack on a busy machine
    EXPECT_NE(d->health(), Health::up); // timeouts make it Suspect at least
    EXPECT_GE(d->counters().timeouts, 5u);

    // Probes fail: Down after 3 of them (200 ms apart).
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::down; }, 3000ms))
        << "health is " << to_string(d->health());
    // Down: fail fast, well before the deadline.
    auto t1 = Clock::now();
    auto fast = d->null(deadline_in(2000ms)).get();
    EXPECT_EQ(fast.status.code, DsErrc::unavailable) << what(fast.status);
    EXPECT_LT(Clock::now() - t1, 250ms); // not the 2 s deadline
    // Placement avoids it.
    for (int n = 0; n < 3; ++n) {
        auto p = fleet_.place(2);
        ASSERT_TRUE(p.ok());
        for (const auto& x : p.value)
            EXPECT_NE(x->id(), d->id());
    }
    EXPECT_EQ(fleet_.place(3).status.code, DsErrc::servers_unavailable);

    ASSERT_TRUE(server.signal(SIGCONT));
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::up; }, 5000ms))
        << "health is " << to_string(d->health());
    auto n = d->null().get();
    EXPECT_TRUE(n.ok()) << what(n.status);
    EXPECT_TRUE(fleet_.place(3).ok());
}

// A WRITE from a caller's lent buffer (a proxied WRITE's data) that is still waiting to be
// sent when its caller closes the buffer is never sent: its caller stopped waiting, and
// its bytes are gone. Here it waits behind a WRITE of the same file that timed out while
// the server was frozen.
TEST_F(FleetTest, LentWriteClosedBeforeItIsSentIsNotSent) {
    auto& server = cluster_->ds(1);
    TestFile file;
    ASSERT_NO_FATAL_FAILURE(create_test_file(1, 0x9d, file));
    const auto& [d, name, fh, on_disk] = file;
    const auto first = pattern(4096, 61);
    const auto lent = pattern(4096, 62);

    ASSERT_TRUE(server.signal(SIGSTOP));
    ASSERT_TRUE(wait_all_threads_stopped(server.pid(), 2000ms));
    auto old = d->write(fh, 0, first, StableHow::file_sync, deadline_in(300ms)).get();
    EXPECT_EQ(old.status.code, DsErrc::timeout) << what(old.status);
    auto source = lend(lent);
    std::promise<DsResult<WriteResult>> answered;
    d->write(fh, 0, source, 0, lent.size(), StableHow::file_sync, deadline_in(5000ms),
             [&](DsResult<WriteResult> r) { answered.set_value(std::move(r)); });
    source->close();
    ASSERT_TRUE(server.signal(SIGCONT));

    auto f = answered.get_future();
    ASSERT_EQ(f.wait_for(6000ms), std::future_status::ready);
    const auto r = f.get();
    EXPECT_EQ(r.status.code, DsErrc::rpc) << what(r.status);
    EXPECT_NE(r.status.message.find("not sent: its caller stopped waiting"), std::string::npos)
        << what(r.status);
    ASSERT_TRUE(d->read(fh, 0, 4096).get().ok()); // the old WRITE is done by now
    EXPECT_TRUE(bytes_on_disk(on_disk) == first) << "the closed buffer's WRITE was sent";
    EXPECT_TRUE(d->remove(name).get().ok());
}

// A WRITE that timed out while the data server was frozen may still run when it resumes:
// it sits in the server's socket buffer. A newer WRITE of the same file must not overtake
// it, or the older bytes would land last. The client holds the newer one until the old
// one is answered, also when the old connection was dropped (Down) in between: that
// connection is kept open for the answer. Both the same-connection and the reconnect case.
TEST_F(FleetTest, NewerWriteNeverOvertakesOneThatTimedOut) {
    auto& server = cluster_->ds(1);
    TestFile file;
    ASSERT_NO_FATAL_FAILURE(create_test_file(1, 0x99, file));
    const auto& [d, name, fh, on_disk] = file;

    for (const bool let_it_go_down : {false, true}) {
        SCOPED_TRACE(let_it_go_down ? "after Down and a new connection" : "same connection");
        // The stale WRITE is the bigger one, so that the server takes longer over it.
        const auto stale = pattern(512 * 1024, let_it_go_down ? 21 : 11);
        const auto fresh = pattern(8192, let_it_go_down ? 22 : 12);
        ASSERT_TRUE(server.signal(SIGSTOP));
        ASSERT_TRUE(wait_all_threads_stopped(server.pid(), 2000ms));
        auto old = d->write(fh, 0, stale, StableHow::file_sync, deadline_in(300ms)).get();
        EXPECT_EQ(old.status.code, DsErrc::timeout) << what(old.status);
        if (let_it_go_down) {
            ASSERT_TRUE(wait_until([&] { return d->health() == Health::down; }, 3000ms))
                << "health is " << to_string(d->health());
        } else {
            // Still connected: a newer WRITE waits behind the old one, up to its deadline.
            auto held = d->write(fh, 0, fresh, StableHow::file_sync, deadline_in(200ms)).get();
            EXPECT_EQ(held.status.code, DsErrc::timeout) << what(held.status);
            EXPECT_NE(held.status.message.find("an earlier change of this file is still "
                                               "unanswered"),
                      std::string::npos)
                << what(held.status);
        }
        ASSERT_TRUE(server.signal(SIGCONT));
        // Sent as soon as the client takes it (on the new connection once it is Up again).
        ASSERT_TRUE(wait_until([&] { return d->health() != Health::down; }, 5000ms));
        auto w = d->write(fh, 0, fresh, StableHow::file_sync, deadline_in(5000ms)).get();
        ASSERT_TRUE(w.ok()) << what(w.status);
        // Whatever the server still had is done by now; what is on disk is the newer data.
        auto r = d->read(fh, 0, 8192).get();
        ASSERT_TRUE(r.ok()) << what(r.status);
        std::this_thread::sleep_for(200ms);
        const std::vector<std::uint8_t> bytes = bytes_on_disk(on_disk);
        ASSERT_EQ(bytes.size(), stale.size());
        EXPECT_TRUE(std::equal(fresh.begin(), fresh.end(), bytes.begin()))
            << "the timed-out WRITE landed after the newer one";
    }
    EXPECT_TRUE(d->remove(name).get().ok());
}

// WRITEs sent and answered on the calling thread (DataServer::write_here): to two servers
// at once, landing as write() would, counted, and without the event thread's queue (sent
// as it was submitted).
TEST_F(FleetTest, WritesOnTheCallingThreadLandAndAreCounted) {
    std::vector<std::shared_ptr<DataServer>> servers{ds(0), ds(1)};
    const std::string name = legacy_data_file_name(0x9b, 0);
    std::vector<DsFh> fhs;
    for (auto& d : servers) {
        auto cr = create_afresh(*d, name);
        ASSERT_TRUE(cr.ok()) << what(cr.status);
        fhs.push_back(cr.value.fh);
    }
    const auto data = std::make_shared<const std::vector<std::uint8_t>>(pattern(8192, 41));
    const std::uint64_t before = servers[0]->counters().direct_writes;
    for (int round = 0; round < 3; ++round) { // the second and third reuse the connections
        std::vector<DirectWrite> writes(2);
        for (std::size_t i = 0; i < 2; ++i) {
            writes[i].ds = servers[i];
            writes[i].fh = fhs[i];
            writes[i].offset = 4096;
            writes[i].source = lend(*data);
            writes[i].at = 4096;
            writes[i].length = 4096;
            writes[i].stable = StableHow::file_sync;
            writes[i].deadline = deadline_in(3000ms);
        }
        DataServer::write_here(writes);
        for (std::size_t i = 0; i < 2; ++i) {
            SCOPED_TRACE("round " + std::to_string(round) + ", server " + std::to_string(i));
            ASSERT_TRUE(writes[i].result.has_value()) << "not sent on the calling thread";
            ASSERT_TRUE(writes[i].result->ok()) << what(writes[i].result->status);
            EXPECT_EQ(writes[i].result->value.count, 4096u);
            EXPECT_EQ(writes[i].result->value.committed, StableHow::file_sync);
            ASSERT_TRUE(writes[i].result->value.attrs.has_value());
            EXPECT_EQ(writes[i].result->value.attrs->size, 8192u);
            const CallTimes& t = writes[i].result->value.times;
            EXPECT_EQ(t.sent, t.submitted) << "no queue on the calling thread";
            EXPECT_GT(t.replied, t.sent);
        }
    }
    EXPECT_EQ(servers[0]->counters().direct_writes, before + 3);
    EXPECT_EQ(servers[0]->counters().direct_connections, 1u) << "one connection, reused";
    for (std::size_t i = 0; i < 2; ++i) {
        auto r = servers[i]->read(fhs[i], 4096, 4096).get();
        ASSERT_TRUE(r.ok()) << what(r.status);
        EXPECT_TRUE(std::equal(r.value.data.begin(), r.value.data.end(), data->begin() + 4096));
        EXPECT_TRUE(servers[i]->remove(name).get().ok());
    }
}

// A thread alone in waiting on direct connections polls for its reply a while before it
// sleeps (DataServerConfig::direct_spin): with 50 ms to poll, a loopback server's replies
// come while it polls; with 0 it sleeps at once and none is counted so. (With 1 ms, the
// default's order, CI once saw 2 of 5 replies come later: on a loaded machine the data
// server's thread may wait longer than that for a core.) Each connection's first WRITE is
// left out of the count: the server's first request on a new connection sets it up.
TEST_F(FleetTest, LoneWriterPollsForItsReplyBeforeSleeping) {
    const std::string name = legacy_data_file_name(0x9c, 0);
    std::vector<std::shared_ptr<DataServer>> servers;
    for (const auto& [id, spin] : {std::pair{12u, 0us}, std::pair{13u, 50000us}}) {
        auto cfg = config_for(cluster_->ds_info()[0]);
        cfg.id = id;
        cfg.direct_spin = spin;
        ASSERT_TRUE(fleet_.add(cfg).ok());
        servers.push_back(fleet_.find(id));
        ASSERT_TRUE(wait_until([&] { return servers.back()->health() == Health::up; }, 5000ms));
    }
    auto cr = create_afresh(*servers[0], name);
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    const auto data = std::make_shared<const std::vector<std::uint8_t>>(pattern(4096, 43));
    constexpr int kWrites = 10;
    std::vector<std::uint64_t> spun_before;
    for (auto& d : servers) {
        for (int i = 0; i <= kWrites; ++i) {
            if (i == 1)
                spun_before.push_back(d->counters().direct_spun);
            std::vector<DirectWrite> one(1);
            one[0].ds = d;
            one[0].fh = cr.value.fh;
            one[0].source = lend(*data);
            one[0].length = 4096;
            one[0].stable = StableHow::unstable;
            one[0].deadline = deadline_in(3000ms);
            DataServer::write_here(one);
            ASSERT_TRUE(one[0].result.has_value()) << "not sent on the calling thread";
            ASSERT_TRUE(one[0].result->ok()) << what(one[0].result->status);
        }
    }
    EXPECT_EQ(servers[0]->counters().direct_writes, unsigned{kWrites + 1});
    EXPECT_EQ(servers[0]->counters().direct_spun, 0u) << "DS_Direct_Spin = 0 never polls";
    EXPECT_EQ(servers[1]->counters().direct_writes, unsigned{kWrites + 1});
    // A reply later than 50 ms on loopback would take a machine far busier than CI's.
    EXPECT_GE(servers[1]->counters().direct_spun - spun_before[1], std::uint64_t{kWrites - 1});
    EXPECT_TRUE(servers[0]->remove(name).get().ok());
}

// READs sent and answered on the calling thread (DataServer::read_here): the data lands in
// the caller's buffer, a 1 MiB reply whole, a read past the end short with EOF; the
// post-op attributes come back; an NFS error is a clean failure that leaves the connection
// fit for the next read; the reads are counted; and with no direct connections nothing
// goes this way.
TEST_F(FleetTest, ReadsOnTheCallingThreadLandInTheCallersBuffer) {
    auto d = ds(1);
    const std::string name = legacy_data_file_name(0x9d, 0);
    auto cr = create_afresh(*d, name);
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    const std::uint32_t max = d->config().max_io_size;
    const auto data = pattern(max + 5000, 47); // a full READ, then a short one at the end
    ASSERT_TRUE(d->write(cr.value.fh, 0,
                         std::vector<std::uint8_t>(data.begin(), data.begin() + max),
                         StableHow::file_sync)
                    .get()
                    .ok());
    ASSERT_TRUE(d->write(cr.value.fh, max,
                         std::vector<std::uint8_t>(data.begin() + max, data.end()),
                         StableHow::file_sync)
                    .get()
                    .ok());
    const DsCounters before = d->counters();

    std::vector<std::uint8_t> buffer(max, 0xee);
    auto whole = d->read_here(cr.value.fh, 0, buffer, deadline_in(3000ms));
    ASSERT_TRUE(whole.has_value()) << "not sent on the calling thread";
    ASSERT_TRUE(whole->ok()) << what(whole->status);
    EXPECT_EQ(whole->value.placed, max);
    EXPECT_FALSE(whole->value.eof);
    EXPECT_TRUE(whole->value.data.empty());
    EXPECT_TRUE(std::equal(buffer.begin(), buffer.end(), data.begin()));
    ASSERT_TRUE(whole->value.attrs.has_value());
    EXPECT_EQ(whole->value.attrs->size, data.size());
    EXPECT_EQ(whole->value.attrs->mode, 0644u);

    std::fill(buffer.begin(), buffer.end(), 0xee);
    auto tail = d->read_here(cr.value.fh, max, std::span(buffer).first(8192), deadline_in(3000ms));
    ASSERT_TRUE(tail.has_value() && tail->ok()) << (tail ? what(tail->status) : "not sent");
    EXPECT_EQ(tail->value.placed, 5000u);
    EXPECT_TRUE(tail->value.eof);
    EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 5000, data.begin() + max));
    EXPECT_EQ(buffer[5000], 0xee) << "bytes past the reply's data were written";

    auto stale = d->read_here(*DsFh::from_bytes("\x01", 1), 0, std::span(buffer).first(4096),
                              deadline_in(3000ms));
    ASSERT_TRUE(stale.has_value());
    EXPECT_EQ(stale->status.code, DsErrc::nfs) << what(stale->status);
    EXPECT_NE(stale->status.nfs3, 0u);

    auto again =
        d->read_here(cr.value.fh, 4096, std::span(buffer).first(4096), deadline_in(3000ms));
    ASSERT_TRUE(again.has_value() && again->ok()) << (again ? what(again->status) : "not sent");
    EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 4096, data.begin() + 4096));

    const DsCounters after = d->counters();
    EXPECT_EQ(after.direct_reads - before.direct_reads, 4u);
    EXPECT_EQ(after.requests - before.requests, 4u);
    EXPECT_EQ(after.errors - before.errors, 1u) << "the bogus handle's NFS error";
    EXPECT_EQ(after.timeouts, before.timeouts);
    EXPECT_EQ(after.in_flight, 0u);
    EXPECT_EQ(after.direct_connections, 1u) << "one connection, kept through the NFS error";
    EXPECT_EQ(d->health(), Health::up);

    auto cfg = config_for(cluster_->ds_info()[1]);
    cfg.id = 14;
    cfg.direct_connections = 0;
    ASSERT_TRUE(fleet_.add(cfg).ok());
    auto off = fleet_.find(14);
    ASSERT_TRUE(wait_until([&] { return off->health() == Health::up; }, 5000ms));
    EXPECT_FALSE(off->read_here(cr.value.fh, 0, std::span(buffer).first(4096)).has_value())
        << "DS_Direct_Connections = 0 sends everything through the event thread";
    EXPECT_EQ(off->counters().requests, 0u);
    EXPECT_TRUE(d->remove(name).get().ok());
}

// A READ on the calling thread whose server does not answer ends by its deadline as a
// timeout, which counts against the server's health; its connection, whose reply was
// never read, is closed rather than reused; once the server answers again, so do reads.
TEST_F(FleetTest, ReadOnTheCallingThreadTimesOutByItsDeadline) {
    auto d = ds(2);
    auto& server = cluster_->ds(2);
    const std::string name = legacy_data_file_name(0x9e, 0);
    auto cr = create_afresh(*d, name);
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    const auto data = pattern(1 << 20, 53);
    ASSERT_TRUE(d->write(cr.value.fh, 0, data, StableHow::file_sync).get().ok());
    std::vector<std::uint8_t> buffer(data.size());
    auto warm = d->read_here(cr.value.fh, 0, buffer, deadline_in(3000ms));
    ASSERT_TRUE(warm.has_value() && warm->ok()) << (warm ? what(warm->status) : "not sent");
    ASSERT_EQ(d->counters().direct_connections, 1u);
    const DsCounters before = d->counters();

    ASSERT_TRUE(server.signal(SIGSTOP));
    ASSERT_TRUE(wait_all_threads_stopped(server.pid(), 2000ms));
    const auto t0 = Clock::now();
    auto late = d->read_here(cr.value.fh, 0, buffer, t0 + 300ms);
    const auto took = Clock::now() - t0;
    ASSERT_TRUE(server.signal(SIGCONT));
    ASSERT_TRUE(late.has_value()) << "not sent on the calling thread";
    EXPECT_EQ(late->status.code, DsErrc::timeout) << what(late->status);
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 500ms); // the deadline plus scheduling slack on a busy machine
    const DsCounters after = d->counters();
    EXPECT_EQ(after.timeouts - before.timeouts, 1u);
    EXPECT_EQ(after.in_flight, 0u);
    EXPECT_EQ(after.direct_connections, 0u) << "a connection with a reply unread was kept";

    ASSERT_TRUE(wait_until([&] { return d->health() == Health::up; }, 5000ms))
        << "health is " << to_string(d->health());
    std::fill(buffer.begin(), buffer.end(), 0);
    auto again = d->read_here(cr.value.fh, 0, buffer, deadline_in(3000ms));
    ASSERT_TRUE(again.has_value() && again->ok()) << (again ? what(again->status) : "not sent");
    EXPECT_EQ(again->value.placed, data.size());
    EXPECT_EQ(buffer, data);
    EXPECT_TRUE(d->remove(name).get().ok());
}

// The ordering rule holds for WRITEs sent on the calling thread: one that times out there
// holds every newer change of its file, on either path, until it is settled; the newer
// data is what lands.
TEST_F(FleetTest, WriteTimedOutOnTheCallingThreadHoldsNewerChanges) {
    auto& server = cluster_->ds(2);
    TestFile file;
    ASSERT_NO_FATAL_FAILURE(create_test_file(2, 0x9c, file));
    const auto& [d, name, fh, on_disk] = file;
    const auto stale = std::make_shared<const std::vector<std::uint8_t>>(pattern(512 * 1024, 51));
    const auto fresh = pattern(8192, 52);

    ASSERT_TRUE(server.signal(SIGSTOP));
    ASSERT_TRUE(wait_all_threads_stopped(server.pid(), 2000ms));
    std::vector<DirectWrite> old(1);
    old[0] = DirectWrite{.ds = d,
                         .fh = fh,
                         .offset = 0,
                         .source = lend(*stale),
                         .at = 0,
                         .length = stale->size(),
                         .stable = StableHow::file_sync,
                         .deadline = deadline_in(300ms),
                         .result = std::nullopt};
    DataServer::write_here(old);
    ASSERT_TRUE(old[0].result.has_value()) << "not sent on the calling thread";
    EXPECT_EQ(old[0].result->status.code, DsErrc::timeout) << what(old[0].result->status);

    // A newer change takes the event thread's way, which holds it behind the old one.
    std::vector<DirectWrite> newer(1);
    newer[0] = old[0];
    newer[0].deadline = deadline_in(200ms);
    std::vector<std::size_t> left;
    DataServer::write_here(newer, [&](std::size_t i) { left.push_back(i); });
    EXPECT_FALSE(newer[0].result.has_value()) << "sent while an earlier change is unanswered";
    EXPECT_EQ(left, std::vector<std::size_t>{0}) << "the caller was not told to send it";
    auto held = d->write(fh, 0, fresh, StableHow::file_sync, deadline_in(200ms)).get();
    EXPECT_EQ(held.status.code, DsErrc::timeout) << what(held.status);
    EXPECT_NE(held.status.message.find("an earlier change of this file is still unanswered"),
              std::string::npos)
        << what(held.status);

    ASSERT_TRUE(server.signal(SIGCONT));
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::up; }, 5000ms));
    auto w = d->write(fh, 0, fresh, StableHow::file_sync, deadline_in(5000ms)).get();
    ASSERT_TRUE(w.ok()) << what(w.status);
    std::this_thread::sleep_for(200ms);
    const std::vector<std::uint8_t> bytes = bytes_on_disk(on_disk);
    ASSERT_EQ(bytes.size(), stale->size());
    EXPECT_TRUE(std::equal(fresh.begin(), fresh.end(), bytes.begin()))
        << "the timed-out WRITE landed after the newer one";
    // Settled: the calling thread's way is open again.
    ASSERT_TRUE(wait_until(
        [&] {
            std::vector<DirectWrite> again(1);
            again[0] = newer[0];
            again[0].source = lend(fresh);
            again[0].length = fresh.size();
            again[0].deadline = deadline_in(2000ms);
            DataServer::write_here(again);
            return again[0].result.has_value() && again[0].result->ok();
        },
        3000ms));
    EXPECT_TRUE(d->remove(name).get().ok());
}

// The other way an unanswered change is settled: the server dies with it (here frozen,
// then killed and started again). Its kept connection closes, and writes to the file go
// through again instead of being held for ever.
TEST_F(FleetTest, UnansweredWriteIsSettledWhenTheServerDies) {
    auto d = ds(0);
    auto& server = cluster_->ds(0);
    const std::string name = legacy_data_file_name(0x9a, 0);
    auto cr = create_afresh(*d, name);
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    const DsFh fh = cr.value.fh;

    ASSERT_TRUE(server.signal(SIGSTOP));
    ASSERT_TRUE(wait_all_threads_stopped(server.pid(), 2000ms));
    auto old = d->write(fh, 0, pattern(4096, 31), StableHow::file_sync, deadline_in(300ms)).get();
    EXPECT_EQ(old.status.code, DsErrc::timeout) << what(old.status);
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::down; }, 3000ms));
    // Down: a newer write fails at once, and is not queued behind the old one.
    auto down = d->write(fh, 0, pattern(4096, 32), StableHow::file_sync, deadline_in(300ms)).get();
    EXPECT_EQ(down.status.code, DsErrc::unavailable) << what(down.status);

    ASSERT_TRUE(server.signal(SIGKILL));
    server.stop(); // reaps it
    server.start();
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::up; }, 5000ms))
        << "health is " << to_string(d->health());
    const auto fresh = pattern(4096, 33);
    auto w = d->write(fh, 0, fresh, StableHow::file_sync, deadline_in(3000ms)).get();
    ASSERT_TRUE(w.ok()) << what(w.status);
    auto r = d->read(fh, 0, 4096).get();
    ASSERT_TRUE(r.ok()) << what(r.status);
    EXPECT_TRUE(r.value.data == fresh);
    EXPECT_TRUE(d->remove(name).get().ok());
}

TEST_F(FleetTest, RestartedServerIsReconnected) {
    auto d = ds(2);
    auto& server = cluster_->ds(2);
    const std::string name = legacy_data_file_name(0x77, 1);
    auto cr = create_afresh(*d, name);
    ASSERT_TRUE(cr.ok()) << what(cr.status);
    auto connects = d->counters().connects;

    server.stop();
    // The connection drops: a request fails (disconnected or unavailable), never hangs.
    auto t0 = Clock::now();
    auto during = d->getattr(cr.value.fh, deadline_in(2000ms)).get();
    EXPECT_FALSE(during.ok());
    EXPECT_TRUE(during.status.code == DsErrc::disconnected ||
                during.status.code == DsErrc::unavailable || during.status.code == DsErrc::timeout)
        << what(during.status);
    EXPECT_LT(Clock::now() - t0, 2100ms);
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::down; }, 3000ms));

    server.start();
    ASSERT_TRUE(wait_until([&] { return d->health() == Health::up; }, 5000ms))
        << "health is " << to_string(d->health());
    EXPECT_GT(d->counters().connects, connects);
    // Handles survive the restart (VFS handles are persistent).
    auto g = d->getattr(cr.value.fh).get();
    ASSERT_TRUE(g.ok()) << what(g.status);
    EXPECT_EQ(g.value.mode, 0644u);
    EXPECT_TRUE(d->remove(name).get().ok());
}

TEST_F(FleetTest, RemovedServerAnswersShutdown) {
    auto d = ds(1);
    ASSERT_TRUE(d->null().get().ok());
    ASSERT_TRUE(fleet_.remove(2).ok());
    auto r = d->null().get();
    EXPECT_EQ(r.status.code, DsErrc::shutdown);
    EXPECT_EQ(d->conn_state(), ConnState::stopped);
    EXPECT_EQ(fleet_.find(2), nullptr);
}

} // namespace
