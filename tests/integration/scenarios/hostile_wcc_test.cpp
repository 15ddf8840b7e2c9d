// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Hostile and buggy LAYOUT_WCC reports (issue #13, "What a client says stays bounded" and
// "Owner strings"): each test sends what a misbehaving client could send and checks, on the
// wire and in the export's counters (ganesha-ff stats), that it changes nothing for anyone
// else:
//   * a time_metadata in 2100 from an RW holder: refused (WCC_Max_Ctime_Skew), and the
//     file's GETATTR answers what the data servers say once that client is gone;
//   * a READ layout's report on a file the cache knows nothing of: GETATTR still answers
//     the data servers' size, not the namespace file's 0;
//   * a report for a mirror that went stale after the layout was granted: ignored;
//   * a 64 KiB body of hundreds of distinct unmappable owner strings: answered at once,
//     no owner repair, the owners counted as unknown.
//
// Cluster: 1 MDS (FLEXFILES over VFS, Protocols 3 and 4, Mirrors = 2, DS_IO_Timeout = 1 s,
// WCC_Max_Age = 0, a private dbus) + 3 NFSv3 data servers. Clients: the client library's NFSv4.2
// session (LAYOUTGET, LAYOUT_WCC, GETATTR), NFSv3 to the data servers under the layout's
// credentials, NFSv3 to the MDS for writes through it.
#include "admin_cli_support.hpp"
#include "client/layout_wcc.hpp"
#include "layout_test_support.hpp"
#include "mds_test_support.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/wait.h>

namespace lt = flexfiles::layout_test;
namespace admin_cli = flexfiles::admin_cli;
using namespace mds_test;

namespace {

lt::NfsTime nfs4_time(const Nfs3Time& t) {
    return lt::NfsTime{t.seconds, t.nseconds};
}

lt::NfsTime wall_now() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return lt::NfsTime{static_cast<std::int64_t>(ts.tv_sec),
                       static_cast<std::uint32_t>(ts.tv_nsec)};
}

// One data file's entry as a client reports it, from NFSv3 post-op attributes.
lt::DataServerWcc entry_of(const lt::LayoutDs& ds, const Nfs3Attr& a) {
    lt::DataServerWcc d;
    std::memcpy(d.deviceid.data(), ds.deviceid.data(), NFS4_DEVICEID4_SIZE);
    d.stateid = ds.stateid;
    d.fh_versions.push_back(
        lt::FileHandle{{ds.fh_vers[0].bytes.begin(), ds.fh_vers[0].bytes.end()}});
    d.attrs.size = a.size;
    d.attrs.space_used = a.used;
    d.attrs.mode = a.mode;
    d.attrs.owner = std::to_string(a.uid);
    d.attrs.owner_group = std::to_string(a.gid);
    d.attrs.time_access = nfs4_time(a.atime);
    d.attrs.time_modify = nfs4_time(a.mtime);
    d.attrs.time_metadata = nfs4_time(a.ctime);
    return d;
}

// One ff_mirror_wcc4 per entry.
std::vector<char> body_of(std::vector<lt::DataServerWcc> entries) {
    lt::FlexLayoutWcc body;
    for (auto& e : entries) {
        lt::MirrorWcc m;
        m.data_servers.push_back(std::move(e));
        body.mirrors.push_back(std::move(m));
    }
    return lt::encode_flex_layout_wcc(body);
}

class HostileWcc : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(admin_cli::binary())) << admin_cli::binary();
        // WCC_Max_Age = 0: while an RW layout is out every GETATTR asks the data servers, so
        // each GETATTR below is data-server-backed.
        MdsSettings settings = fast_failures();
        settings.extra = "        WCC_Max_Age = 0;\n";
        ClusterOptions o = flexfiles_cluster(settings);
        o.with_dbus = true;
        auto inner = o.configure_mds;
        o.configure_mds = [inner](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
            inner(mds, ds);
            mds.log_level = std::getenv("HOSTILE_WCC_DEBUG") ? "NIV_DEBUG" : "NIV_EVENT";
        };
        cluster_ = std::make_unique<Cluster>(o);
        lt::SessionOptions so;
        so.host = cluster_->mds().address();
        so.port = cluster_->mds().nfs_port();
        so.minor_version = 2;
        session_ = lt::Session::open(so);
        // A layout recalled (a mirror marked stale) is kept for a while, as a slow client
        // would; the recall's stateid (its seqid moved on) is what the client uses next.
        session_->set_callback_handler([this](const nfs_cb_argop4& op, nfs_cb_resop4&) {
            if (op.argop != NFS4_OP_CB_LAYOUTRECALL)
                return NFS4ERR_NOTSUPP;
            const layoutrecall4& r = op.nfs_cb_argop4_u.opcblayoutrecall.clora_recall;
            if (r.lor_recalltype == LAYOUTRECALL4_FILE) {
                std::lock_guard lock(recall_mu_);
                recalled_ = r.layoutrecall4_u.lor_layout.lor_stateid;
            }
            return NFS4_OK;
        });
        wait_until_registered();
    }

    void TearDown() override {
        if (!cluster_)
            return;
        if (stopped_)
            cluster_->ds(*stopped_).start();
        const auto errors = cluster_->mds().error_lines({"-> Down", "-> Suspect"});
        EXPECT_TRUE(errors.empty()) << joined(errors);
    }

    CommandResult cli(std::vector<std::string> args) {
        return admin_cli::run(*cluster_->dbus(), std::move(args));
    }

    void wait_until_registered() {
        ASSERT_TRUE(admin_cli::wait_until_registered(*cluster_->dbus()))
            << "the FLEXFILES dbus interface never appeared";
    }

    // `ganesha-ff --json stats` as name -> value.
    std::map<std::string, std::uint64_t> stats() { return admin_cli::counters(*cluster_->dbus()); }
    // How much counter `name` moved from `before` to now (a counter the server does not
    // report reads as absent: a test failure).
    std::uint64_t moved(const std::map<std::string, std::uint64_t>& before,
                        const std::string& name) {
        const auto now = stats();
        const auto it = now.find(name);
        EXPECT_NE(it, now.end()) << "the server reports no counter " << name;
        if (it == now.end())
            return 0;
        const auto was = before.find(name);
        return it->second - (was == before.end() ? 0 : was->second);
    }

    lt::OpenFile open(const std::string& name, bool rw, bool create) {
        lt::OpenOptions o;
        o.access = rw ? OPEN4_SHARE_ACCESS_BOTH : OPEN4_SHARE_ACCESS_READ;
        o.create = create;
        return lt::open_path(*session_, "/export1/" + name, o);
    }

    // Writes `data` at 0 to every mirror of the layout, straight to the data servers under
    // the layout's credentials; each data file's post-op attributes, in mirror order.
    std::vector<Nfs3Attr> write_mirrors(const lt::Layout& l,
                                        const std::vector<std::uint8_t>& data) {
        std::vector<Nfs3Attr> post;
        for (const auto& mirror : l.mirrors) {
            const lt::LayoutDs& e = mirror[0];
            const DataServerInfo* info = ds_of(e);
            EXPECT_NE(info, nullptr);
            if (info == nullptr)
                return {};
            Nfs3Client ds(info->nfs3_url(), e.creds());
            const Nfs3WriteResult w = ds.write(e.fh_vers[0], 0, data, Nfs3Stable::file_sync);
            EXPECT_EQ(w.status, Nfs3Status::ok);
            EXPECT_TRUE(w.file_wcc.after.has_value());
            post.push_back(w.file_wcc.after.value_or(Nfs3Attr{}));
        }
        return post;
    }

    const DataServerInfo* ds_of(const lt::LayoutDs& entry) {
        const lt::DeviceInfoResult info = lt::getdeviceinfo(*session_, entry.deviceid);
        if (info.status != NFS4_OK || !info.addr || info.addr->netaddrs.empty())
            return nullptr;
        for (const auto& ds : cluster_->ds_info()) {
            const std::string uaddr = ds.address + "." + std::to_string(ds.nfs_port >> 8) + "." +
                                      std::to_string(ds.nfs_port & 0xff);
            if (uaddr == info.addr->netaddrs[0].second)
                return &ds;
        }
        return nullptr;
    }

    // PUTFH, LAYOUT_WCC, GETATTR(size, time_modify): LAYOUT_WCC's status and the size and
    // mtime GETATTR answered.
    struct WccAndGetattr {
        std::optional<std::uint32_t> status;
        std::optional<std::uint64_t> size;
        std::optional<lt::NfsTime> mtime;
    };
    WccAndGetattr wcc_then_getattr(const lt::OpenFile& f, const stateid4& layout,
                                   const std::vector<char>& body) {
        lt::Compound c;
        c.putfh(f.fh);
        c.layout_wcc(layout, LAYOUT4_FLEX_FILES, body);
        c.getattr(lt::AttrMask{FATTR4_SIZE, FATTR4_TIME_MODIFY});
        lt::CompoundResult r = session_->send(c);
        WccAndGetattr out;
        out.status = r.status_of(1);
        if (r.ok()) {
            const lt::Fattr a = r.attrs(2);
            out.size = a.size;
            out.mtime = a.time_modify;
        }
        return out;
    }

    lt::Fattr getattr(const lt::FileHandle& fh) {
        lt::Compound c;
        c.putfh(fh).getattr(lt::AttrMask{FATTR4_SIZE, FATTR4_TIME_MODIFY});
        lt::CompoundResult r = session_->send(c);
        r.check("GETATTR");
        return r.attrs(1);
    }

    static const Nfs3Attr& freshest(const std::vector<Nfs3Attr>& post) {
        return *std::max_element(
            post.begin(), post.end(),
            [](const Nfs3Attr& a, const Nfs3Attr& b) { return a.ctime < b.ctime; });
    }

    std::optional<stateid4> recalled() {
        std::lock_guard lock(recall_mu_);
        return recalled_;
    }

    std::unique_ptr<Cluster> cluster_;
    std::unique_ptr<lt::Session> session_;
    std::optional<unsigned> stopped_; // a data server the test stopped
    std::mutex recall_mu_;
    std::optional<stateid4> recalled_; // the stateid of the last CB_LAYOUTRECALL
};

} // namespace

// An RW holder reports time_metadata (and mtime) in 2100 with a wrong size. Before: every
// later data-server answer and honest report was "stale" against 2100, so the file kept
// the lie for every client after that client had gone. Now the entry is refused (ctime
// ahead of the MDS's clock by more than WCC_Max_Ctime_Skew), counted, and GETATTR answers
// the data servers' size and mtime.
TEST_F(HostileWcc, FutureCtimeIsRefusedAndTheFileKeepsItsRealAttributes) {
    lt::OpenFile f = open("future", true, true);
    const lt::Layout l = lt::must_layoutget(*session_, f.fh, f.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(l.mirrors.size(), 2U);
    const std::vector<std::uint8_t> data = pattern(300 * 1024, 3);
    const std::vector<Nfs3Attr> post = write_mirrors(l, data);
    ASSERT_EQ(post.size(), 2U);

    const auto before = stats();
    std::vector<lt::DataServerWcc> lie;
    for (std::size_t m = 0; m < 2; ++m) {
        lt::DataServerWcc e = entry_of(l.mirrors[m][0], post[m]);
        e.attrs.size = 77;
        e.attrs.time_metadata = lt::NfsTime{4102444800, 0}; // 2100-01-01
        e.attrs.time_modify = lt::NfsTime{4102444800, 0};
        lie.push_back(std::move(e));
    }
    const WccAndGetattr w = wcc_then_getattr(f, l.stateid, body_of(std::move(lie)));
    EXPECT_EQ(w.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(moved(before, "wcc.entries_ignored_future_ctime"), 2U);
    EXPECT_EQ(w.size, std::optional<std::uint64_t>(data.size()));

    // The client goes away (layout returned, file closed); another client asks. MDCACHE's
    // copy is left to expire so that the FSAL answers.
    lt::layoutreturn(*session_, f.fh, l.stateid, {}, LAYOUTIOMODE4_ANY);
    lt::close_file(*session_, f);
    std::this_thread::sleep_for(2100ms);
    lt::SessionOptions so;
    so.host = cluster_->mds().address();
    so.port = cluster_->mds().nfs_port();
    so.minor_version = 2;
    auto other = lt::Session::open(so);
    lt::OpenFile theirs = lt::open_path(*other, "/export1/future", {});
    lt::Compound c;
    c.putfh(theirs.fh).getattr(lt::AttrMask{FATTR4_SIZE, FATTR4_TIME_MODIFY});
    lt::CompoundResult r = other->send(c);
    r.check("GETATTR");
    const lt::Fattr a = r.attrs(1);
    EXPECT_EQ(a.size, std::optional<std::uint64_t>(data.size())) << "the file is wedged";
    EXPECT_EQ(a.time_modify, std::optional<lt::NfsTime>(nfs4_time(freshest(post).mtime)));
    lt::close_file(*other, theirs);
}

// A READ layout may only move atime. Before: its report inserted a record without ctime, so
// the cache looked as if it knew the file; with no RW layout out GETATTR then answered the
// namespace file's size, 0. Now the report never makes a record: GETATTR asks the data
// servers and answers their size.
TEST_F(HostileWcc, ReadLayoutReportOnAnUncachedFileKeepsTheRealSize) {
    const std::vector<std::uint8_t> data = pattern(200 * 1024, 5);
    std::vector<Nfs3Attr> post;
    {
        lt::OpenFile f = open("readrep", true, true);
        const lt::Layout l = lt::must_layoutget(*session_, f.fh, f.stateid, LAYOUTIOMODE4_RW);
        ASSERT_EQ(l.mirrors.size(), 2U);
        post = write_mirrors(l, data);
        lt::layoutreturn(*session_, f.fh, l.stateid, {}, LAYOUTIOMODE4_ANY);
        lt::close_file(*session_, f);
    }
    lt::OpenFile f = open("readrep", false, false);
    const lt::Layout rl = lt::must_layoutget(*session_, f.fh, f.stateid, LAYOUTIOMODE4_READ);
    ASSERT_EQ(rl.mirrors.size(), 2U);
    // The MDS forgets what it knew of the file (as after a restart).
    const CommandResult flushed = cli({"flush", "readrep"});
    ASSERT_TRUE(WIFEXITED(flushed.wait_status) && WEXITSTATUS(flushed.wait_status) == 0)
        << flushed.output;

    std::vector<lt::DataServerWcc> report;
    for (std::size_t m = 0; m < 2; ++m)
        report.push_back(entry_of(rl.mirrors[m][0], post[m]));
    const WccAndGetattr w = wcc_then_getattr(f, rl.stateid, body_of(std::move(report)));
    EXPECT_EQ(w.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(w.size, std::optional<std::uint64_t>(data.size()))
        << "GETATTR answered the namespace file's size";
    lt::close_file(*session_, f);
}

// A mirror goes stale (its data server was stopped during a write through the MDS) while a
// client holds an RW layout naming it. Before: the client's report for the stale mirror was
// matched against the layout as granted and applied. Now it is ignored and counted.
TEST_F(HostileWcc, StaleMirrorsReportIsIgnored) {
    Nfs3Client v3(cluster_->mds().nfs3_url());
    const Created created = create_file(v3, "stalem");
    const std::vector<std::uint8_t> data = pattern(100 * 1024, 7);
    write_all(v3, created.fh, 0, data);

    lt::OpenFile f = open("stalem", true, false);
    const lt::Layout l = lt::must_layoutget(*session_, f.fh, f.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(l.mirrors.size(), 2U);
    const DataServerInfo* away_info = ds_of(l.mirrors[0][0]);
    ASSERT_NE(away_info, nullptr);
    unsigned away = 0;
    while (&cluster_->ds_info()[away] != away_info)
        ++away;

    const std::size_t mark = cluster_->mds().log_offset();
    cluster_->ds(away).stop();
    stopped_ = away;
    const std::vector<std::uint8_t> more = pattern(4096, 8);
    write_all(v3, created.fh, data.size(), more);
    ASSERT_TRUE(cluster_->mds().log_contains("missed a WRITE the other mirror(s) took", mark));
    ASSERT_TRUE(eventually([&] { return recalled().has_value(); }, 5s)) << "no CB_LAYOUTRECALL";
    const stateid4 layout_stateid = *recalled();

    // What a client holding the old layout reports for the stale mirror: a small size, with
    // the latest ctime of all.
    Nfs3Attr lie{};
    lie.size = 77;
    lie.used = 4096;
    lie.mode = 0640;
    lie.uid = l.mirrors[0][0].creds().uid;
    lie.gid = l.mirrors[0][0].creds().gid;
    const lt::NfsTime now = wall_now();
    lie.atime = lie.mtime = lie.ctime = Nfs3Time{static_cast<std::uint32_t>(now.seconds + 1), 0};
    const auto before = stats();
    const WccAndGetattr w =
        wcc_then_getattr(f, layout_stateid, body_of({entry_of(l.mirrors[0][0], lie)}));
    EXPECT_EQ(w.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(w.size, std::optional<std::uint64_t>(data.size() + more.size()))
        << "the stale mirror's report was applied";
    EXPECT_EQ(moved(before, "wcc.entries_ignored_stale_mirror"), 1U);
    cluster_->ds(away).start();
    stopped_.reset();
    lt::close_file(*session_, f);
}

// A 64 KiB body whose every entry carries a new unmappable owner and group. Before: one
// idmapper lookup per string under the file's state lock, each failure the anonymous uid, a
// credential "mismatch" and an owner repair. Now: answered at once, no repair, the owners
// counted as unknown.
TEST_F(HostileWcc, OwnerStringFloodIsBoundedAndRepairsNothing) {
    lt::OpenFile f = open("owners", true, true);
    const lt::Layout l = lt::must_layoutget(*session_, f.fh, f.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(l.mirrors.size(), 2U);
    const std::vector<Nfs3Attr> post = write_mirrors(l, pattern(8192, 9));
    ASSERT_EQ(post.size(), 2U);

    // As many entries as fit in LAYOUT_WCC4_BODY_MAX: 31 per ff_mirror_wcc4.
    std::vector<char> body;
    unsigned entries = 0;
    for (unsigned n = 400; n >= 100 && body.empty(); n -= 20) {
        lt::FlexLayoutWcc b;
        for (unsigned i = 0; i < n; ++i) {
            if (i % 31 == 0)
                b.mirrors.emplace_back();
            const unsigned m = i % 2;
            lt::DataServerWcc e = entry_of(l.mirrors[m][0], post[m]);
            e.attrs.owner = "x" + std::to_string(i) + "@hostile.example";
            e.attrs.owner_group = "g" + std::to_string(i) + "@hostile.example";
            b.mirrors.back().data_servers.push_back(std::move(e));
        }
        try {
            body = lt::encode_flex_layout_wcc(b);
            entries = n;
        } catch (const std::exception&) {
        }
    }
    ASSERT_GE(entries, 250U) << "a 64 KiB body holds fewer entries than expected";
    RecordProperty("entries", std::to_string(entries));

    const auto before = stats();
    const auto t0 = std::chrono::steady_clock::now();
    const std::optional<std::uint32_t> st = lt::layout_wcc(*session_, f.fh, l.stateid, body);
    const auto took = std::chrono::steady_clock::now() - t0;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    RecordProperty("layout_wcc_us", std::to_string(us));
    std::printf("LAYOUT_WCC of %u entries (%zu bytes): %lld us\n", entries, body.size(),
                static_cast<long long>(us));
    EXPECT_EQ(st, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_LT(took, 1s);
    EXPECT_EQ(moved(before, "wcc.credential_repairs_sent"), 0U) << "an owner repair was sent";
    EXPECT_EQ(moved(before, "wcc.credential_mismatches"), 0U);
    EXPECT_GE(moved(before, "wcc.owners_unknown"), 2U * entries);
    // The owners are all this body said wrong: its sizes and times still count.
    EXPECT_EQ(getattr(f.fh).size, std::optional<std::uint64_t>(8192));
    lt::close_file(*session_, f);
}
