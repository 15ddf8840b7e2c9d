// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC and GETATTR of a FLEXFILES file end to end (fsal_flexfiles/wcc, fallback):
// a client writes through a flex-files layout straight to the NFSv3 data servers, then
// asks the MDS for the file's attributes with or without handing it the WRITE replies'
// post-op attributes (RFC 9766).
//
// Cluster: 1 MDS (FLEXFILES over VFS, Mirrors = 2) + 3 data servers, a private bus. Each
// data server counts the NFSv3 operations it served (Enable_FULLV3_Stats), read over dbus
// (org.ganesha.nfsd.exportstats.GetFULLV3Stats): that is how "the MDS sent no GETATTR"
// is observed. The test's own NFSv3 client never sends GETATTR to a data server (WRITE and
// SETATTR replies carry the attributes it needs), and the MDS probes with NULL, so every
// GETATTR a data server counts came from the MDS's fallback.
//
// The client side is built here from the client library's raw pieces: LAYOUTGET and
// LAYOUT_WCC as typed ops, ff_layout4 decoded and ff_layout_wcc4 encoded with the XDR
// routines of Ganesha's nfsv41.h (+ protocols/include/nfs4_layout_wcc_xdr.h), and NFSv3
// I/O to the data servers with the harness's Nfs3Client under the layout's credentials.
#include "admin_cli_support.hpp"
#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"
#include "model/deviceid.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <gtest/gtest.h>
#include <regex>
#include <thread>

using namespace flexfiles::harness;
using namespace flexfiles::client;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kMiB = 1u << 20;

// One data file as the layout names it.
struct LayoutDataFile {
    unsigned mirror = 0;
    unsigned ds_index = 0; // the cluster's data server (Id - 1)
    std::array<char, NFS4_DEVICEID4_SIZE> deviceid{};
    stateid4 stateid{};
    Nfs3Fh fh;
    std::uint32_t uid = 0; // ffds_user / ffds_group: the credentials to use on the DS
    std::uint32_t gid = 0;
};

struct Layout {
    stateid4 stateid{};
    std::vector<LayoutDataFile> files; // one per mirror
};

// What a client tells the MDS about one data file: the NFSv3 attributes it saw.
struct DsReport {
    const LayoutDataFile* df = nullptr;
    std::optional<Nfs3Attr> attrs; // empty: an entry with an empty attribute mask
    std::uint32_t extra_attr = 0;  // an attribute outside RFC 9766 Table 1 (0: none)
};

std::vector<char> random_bytes(std::size_t n, unsigned seed) {
    std::vector<char> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& c : v) {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
    }
    return v;
}

NfsTime nfs4_time(const Nfs3Time& t) {
    return NfsTime{t.seconds, t.nseconds};
}

// The FLEXFILES settings a test runs with.
struct Config {
    unsigned wcc_max_age_ms = 1000;
    unsigned ds_getattr_deadline_ms = 500;
    bool trust_wcc = true;
    // The export's Attr_Expiration_Time (MDCACHE); unset: Ganesha's default (60 s).
    std::optional<int> attr_expiration_time;
};

Config config(unsigned wcc_max_age_ms, unsigned ds_getattr_deadline_ms = 500, bool trust_wcc = true,
              std::optional<int> attr_expiration_time = std::nullopt) {
    Config c;
    c.wcc_max_age_ms = wcc_max_age_ms;
    c.ds_getattr_deadline_ms = ds_getattr_deadline_ms;
    c.trust_wcc = trust_wcc;
    c.attr_expiration_time = attr_expiration_time;
    return c;
}

class WccGetattrBase : public ::testing::Test {
public:
    void start(Config cfg = Config{}) {
        cfg_ = cfg;
        ClusterOptions options;
        options.with_dbus = true;
        options.configure_ds = [](ServerOptions& ds, const DataServerInfo&) {
            ds.core_extra += "Enable_FULLV3_Stats = true;\n";
        };
        options.configure_mds = [cfg](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
            FlexfilesOptions ff;
            ff.mirrors = 2;
            ff.extra =
                "        WCC_Max_Age = " + std::to_string(cfg.wcc_max_age_ms) +
                ";\n        DS_Getattr_Deadline = " + std::to_string(cfg.ds_getattr_deadline_ms) +
                ";\n        Trust_WCC = " + (cfg.trust_wcc ? "true" : "false") + ";\n";
            ff.attr_expiration_time = cfg.attr_expiration_time;
            mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        };
        cluster_ = std::make_unique<Cluster>(options);
        SessionOptions so;
        so.host = cluster_->mds().address();
        so.port = cluster_->mds().nfs_port();
        so.minor_version = 2;
        session_ = Session::open(so);
    }

    void TearDown() override {
        if (!cluster_)
            return;
        for (unsigned i = 0; i < cluster_->ds_count(); ++i)
            cluster_->ds(i).signal(SIGCONT);
        EXPECT_TRUE(cluster_->mds().error_lines().empty())
            << ::testing::PrintToString(cluster_->mds().error_lines());
    }

    // ---- NFSv4 to the MDS ----

    OpenFile create(const std::string& name) {
        OpenOptions o;
        o.access = OPEN4_SHARE_ACCESS_BOTH;
        o.create = true;
        o.mode = 0644;
        return open_path(*session_, "/export1/" + name, o);
    }

    Layout layoutget(const OpenFile& f, layoutiomode4 iomode) {
        Compound c;
        c.putfh(f.fh);
        nfs_argop4 op{};
        op.argop = NFS4_OP_LAYOUTGET;
        LAYOUTGET4args& a = op.nfs_argop4_u.oplayoutget;
        a.loga_signal_layout_avail = false;
        a.loga_layout_type = LAYOUT4_FLEX_FILES;
        a.loga_iomode = iomode;
        a.loga_offset = 0;
        a.loga_length = NFS4_UINT64_MAX;
        a.loga_minlength = 0;
        a.loga_stateid = f.stateid;
        a.loga_maxcount = 64 * 1024;
        c.typed(op, "LAYOUTGET");
        CompoundResult r = session_->send(c);
        r.check("LAYOUTGET");
        const LAYOUTGET4resok& ok =
            r.op(1).res.nfs_resop4_u.oplayoutget.LAYOUTGET4res_u.logr_resok4;
        Layout out;
        out.stateid = ok.logr_stateid;
        EXPECT_EQ(ok.logr_layout.logr_layout_len, 1u);
        if (ok.logr_layout.logr_layout_len == 0)
            return out;
        const layout_content4& content = ok.logr_layout.logr_layout_val[0].lo_content;
        EXPECT_EQ(content.loc_type, LAYOUT4_FLEX_FILES);
        XDR x;
        xdrmem_create(&x, content.loc_body.loc_body_val, content.loc_body.loc_body_len, XDR_DECODE);
        ff_layout4 l{};
        const bool decoded = xdr_ff_layout4(&x, &l);
        xdr_destroy(&x);
        EXPECT_TRUE(decoded) << "ff_layout4 does not decode";
        for (u_int m = 0; decoded && m < l.ffl_mirrors.ffl_mirrors_len; ++m) {
            const ff_mirror4& mirror = l.ffl_mirrors.ffl_mirrors_val[m];
            EXPECT_EQ(mirror.ffm_data_servers.ffm_data_servers_len, 1u);
            const ff_data_server4& ds = mirror.ffm_data_servers.ffm_data_servers_val[0];
            LayoutDataFile df;
            df.mirror = m;
            std::copy_n(ds.ffds_deviceid, NFS4_DEVICEID4_SIZE, df.deviceid.begin());
            flexfiles::fleet::DeviceId dev{};
            std::copy_n(reinterpret_cast<const std::uint8_t*>(ds.ffds_deviceid), dev.size(),
                        dev.begin());
            const auto id = flexfiles::fleet::deviceid_ds_id(dev);
            EXPECT_TRUE(id.has_value());
            df.ds_index = id ? static_cast<unsigned>(*id - 1) : 0;
            df.stateid = ds.ffds_stateid;
            const nfs_fh4& fh = ds.ffds_fh_vers.ffds_fh_vers_val[0];
            df.fh.bytes.assign(fh.nfs_fh4_val, fh.nfs_fh4_val + fh.nfs_fh4_len);
            df.uid = static_cast<std::uint32_t>(
                std::stoul(std::string(ds.ffds_user.utf8string_val, ds.ffds_user.utf8string_len)));
            df.gid = static_cast<std::uint32_t>(std::stoul(
                std::string(ds.ffds_group.utf8string_val, ds.ffds_group.utf8string_len)));
            out.files.push_back(df);
        }
        xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layout4), &l);
        return out;
    }

    // The ff_layout_wcc4 body: one ff_mirror_wcc4 per report, one data server each.
    static std::vector<char> wcc_body(const std::vector<DsReport>& reports) {
        std::vector<ff_mirror_wcc4> mirrors(reports.size());
        std::vector<ff_data_server_wcc4> servers(reports.size());
        std::vector<nfs_fh4> fhs(reports.size());
        std::vector<EncodedFattr> attrs(reports.size());
        for (std::size_t i = 0; i < reports.size(); ++i) {
            const DsReport& r = reports[i];
            ff_data_server_wcc4& s = servers[i];
            std::copy(r.df->deviceid.begin(), r.df->deviceid.end(), s.ffdsw_deviceid);
            s.ffdsw_stateid = r.df->stateid;
            fhs[i].nfs_fh4_len = static_cast<u_int>(r.df->fh.bytes.size());
            fhs[i].nfs_fh4_val =
                reinterpret_cast<char*>(const_cast<std::uint8_t*>(r.df->fh.bytes.data()));
            s.ffdsw_fh_vers.ffdsw_fh_vers_len = 1;
            s.ffdsw_fh_vers.ffdsw_fh_vers_val = &fhs[i];
            if (r.attrs) {
                Fattr f;
                f.size = r.attrs->size;
                f.mode = r.attrs->mode;
                f.owner = std::to_string(r.attrs->uid);
                f.owner_group = std::to_string(r.attrs->gid);
                f.space_used = r.attrs->used;
                f.time_access = nfs4_time(r.attrs->atime);
                f.time_metadata = nfs4_time(r.attrs->ctime);
                f.time_modify = nfs4_time(r.attrs->mtime);
                if (r.extra_attr == FATTR4_TYPE)
                    f.type = NF4REG;
                attrs[i] = encode_fattr4(f);
            }
            s.ffdsw_attributes = attrs[i].view();
            mirrors[i].ffmw_data_servers.ffmw_data_servers_len = 1;
            mirrors[i].ffmw_data_servers.ffmw_data_servers_val = &servers[i];
        }
        ff_layout_wcc4 body{};
        body.fflw_mirrors.fflw_mirrors_len = static_cast<u_int>(mirrors.size());
        body.fflw_mirrors.fflw_mirrors_val = mirrors.data();
        std::vector<char> out(LAYOUT_WCC4_BODY_MAX);
        u_int len = 0;
        EXPECT_TRUE(ff_layout_wcc4_encode(&body, out.data(), static_cast<u_int>(out.size()), &len));
        out.resize(len);
        return out;
    }

    static void add_layout_wcc(Compound& c, const Layout& l, const std::vector<char>& body) {
        nfs_argop4 op{};
        op.argop = NFS4_OP_LAYOUT_WCC;
        LAYOUT_WCC4args& a = op.nfs_argop4_u.oplayout_wcc;
        a.lowa_stateid = l.stateid;
        a.lowa_type = LAYOUT4_FLEX_FILES;
        a.lowa_body.lowa_body_len = static_cast<u_int>(body.size());
        a.lowa_body.lowa_body_val = body.empty() ? nullptr : c.keep(body);
        c.typed(op, "LAYOUT_WCC");
    }

    static AttrMask data_attrs() {
        return AttrMask{FATTR4_SIZE, FATTR4_SPACE_USED, FATTR4_TIME_MODIFY};
    }

    // SEQUENCE, PUTFH, LAYOUT_WCC, GETATTR: LAYOUT_WCC's status and GETATTR's attributes.
    std::pair<std::uint32_t, std::optional<Fattr>>
    wcc_then_getattr(const OpenFile& f, const Layout& l, const std::vector<char>& body) {
        Compound c;
        c.putfh(f.fh);
        add_layout_wcc(c, l, body);
        c.getattr(data_attrs());
        CompoundResult r = session_->send(c);
        EXPECT_TRUE(r.replied()) << r.error;
        const std::uint32_t st = r.status_of(1).value_or(NFS4ERR_SERVERFAULT);
        if (!r.ok())
            return {st, std::nullopt};
        return {st, r.attrs(2)};
    }

    Fattr getattr(const OpenFile& f, Session* s = nullptr) {
        Compound c;
        c.putfh(f.fh).getattr(data_attrs());
        CompoundResult r = (s ? s : session_.get())->send(c);
        r.check("GETATTR");
        return r.attrs(1);
    }

    // ---- NFSv3 to the data servers ----

    std::unique_ptr<Nfs3Client> ds_client(const LayoutDataFile& df) {
        return std::make_unique<Nfs3Client>(cluster_->ds(df.ds_index).nfs3_url(),
                                            Nfs3Credentials{df.uid, df.gid});
    }

    // Writes `data` at 0 to every mirror in 256 KiB FILE_SYNC WRITEs; returns each data
    // file's post-op attributes after its last WRITE.
    std::vector<Nfs3Attr> write_mirrors(const Layout& l, const std::vector<char>& data) {
        std::vector<Nfs3Attr> post;
        for (const LayoutDataFile& df : l.files) {
            auto c = ds_client(df);
            std::optional<Nfs3Attr> last;
            for (std::size_t off = 0; off < data.size(); off += 256 * 1024) {
                const std::size_t n = std::min<std::size_t>(256 * 1024, data.size() - off);
                std::vector<std::uint8_t> chunk(data.begin() + off, data.begin() + off + n);
                Nfs3WriteResult w = c->write(df.fh, off, chunk, Nfs3Stable::file_sync);
                EXPECT_EQ(w.status, Nfs3Status::ok) << "mirror " << df.mirror;
                EXPECT_EQ(w.count, n);
                last = w.file_wcc.after;
            }
            EXPECT_TRUE(last.has_value());
            post.push_back(last.value_or(Nfs3Attr{}));
        }
        return post;
    }

    // GETATTRs data server i served so far (GetFULLV3Stats), over the private bus.
    std::uint64_t ds_getattrs(unsigned i) {
        CommandResult r =
            cluster_->dbus()->send(cluster_->ds(i).dbus_bus_name(), "/org/ganesha/nfsd/ExportMgr",
                                   "org.ganesha.nfsd.exportstats.GetFULLV3Stats");
        EXPECT_TRUE(r.ok()) << r.output;
        EXPECT_EQ(r.output.find("disabled"), std::string::npos) << r.output;
        static const std::regex kGetattr("string \"GETATTR\"\\s+uint64 ([0-9]+)");
        std::smatch m;
        if (std::regex_search(r.output, m, kGetattr))
            return std::stoull(m[1]);
        return 0;
    }
    std::vector<std::uint64_t> all_ds_getattrs() {
        std::vector<std::uint64_t> v;
        for (unsigned i = 0; i < cluster_->ds_count(); ++i)
            v.push_back(ds_getattrs(i));
        return v;
    }
    // GETATTRs each data file's server served since `before`, in mirror order.
    std::vector<std::uint64_t> per_mirror_delta(const Layout& l,
                                                const std::vector<std::uint64_t>& before) {
        const auto now = all_ds_getattrs();
        std::vector<std::uint64_t> d;
        for (const LayoutDataFile& df : l.files)
            d.push_back(now[df.ds_index] - before[df.ds_index]);
        return d;
    }
    std::uint64_t total_delta(const std::vector<std::uint64_t>& before) {
        const auto now = all_ds_getattrs();
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < now.size(); ++i)
            sum += now[i] - before[i];
        return sum;
    }

    // The freshest mirror's post-op attributes (what the merged view reports).
    static const Nfs3Attr& freshest(const std::vector<Nfs3Attr>& post) {
        return *std::max_element(
            post.begin(), post.end(),
            [](const Nfs3Attr& a, const Nfs3Attr& b) { return a.ctime < b.ctime; });
    }

    // A file written through an RW layout: (open file, layout, post-op attributes).
    struct Written {
        OpenFile file;
        Layout layout;
        std::vector<Nfs3Attr> post;
    };
    Written written_file(const std::string& name, std::size_t bytes = kMiB) {
        Written w;
        w.file = create(name);
        w.layout = layoutget(w.file, LAYOUTIOMODE4_RW);
        EXPECT_EQ(w.layout.files.size(), 2u);
        EXPECT_NE(w.layout.files.at(0).ds_index, w.layout.files.at(1).ds_index);
        w.post = write_mirrors(w.layout, random_bytes(bytes, 7));
        return w;
    }

    // Long enough for MDCACHE's cached attributes (whole seconds, see pnfs/LAYOUT_WCC.md) and
    // for WCC_Max_Age to expire.
    void let_caches_expire() {
        std::this_thread::sleep_for(std::max<std::chrono::milliseconds>(
            2100ms, std::chrono::milliseconds(cfg_.wcc_max_age_ms + 100)));
    }

    Config cfg_;
    std::unique_ptr<Cluster> cluster_;
    std::unique_ptr<Session> session_;
};

class WccGetattr : public WccGetattrBase {};

} // namespace

// The scenario: after LAYOUT_WCC the MDS answers GETATTR from what the client
// reported, and asks no data server.
// What GETATTR answers for a file written through its layout, from the body's attributes:
// the size and mtime of the freshest mirror, space_used the sum over mirrors (every copy
// occupies space).
void expect_the_written_attributes(const Fattr& a, const WccGetattrBase::Written& w) {
    EXPECT_EQ(a.size, kMiB);
    EXPECT_EQ(a.time_modify, nfs4_time(WccGetattrBase::freshest(w.post).mtime));
    EXPECT_EQ(a.space_used, w.post[0].used + w.post[1].used);
}

TEST_F(WccGetattr, WccThenGetattrAsksNoDataServer) {
    start();
    Written w = written_file("wcc");
    const auto before = all_ds_getattrs();
    auto [status, attrs] = wcc_then_getattr(
        w.file, w.layout,
        wcc_body({{&w.layout.files[0], w.post[0]}, {&w.layout.files[1], w.post[1]}}));
    ASSERT_EQ(status, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(attrs.has_value());
    expect_the_written_attributes(*attrs, w);
    EXPECT_EQ(total_delta(before), 0u) << "the MDS sent GETATTRs to data servers";
}

// The GETATTR after a LAYOUT_WCC is MDCACHE's: the FSAL pushed the new data attributes up
// (mdc_up_update) instead of MDCACHE forgetting its attributes, so no getattrs reaches the
// FSAL (or, below it, VFS's open_by_handle_at + fstat) and the answer still has them.
TEST_F(WccGetattr, WccThenGetattrIsAnsweredByMdcacheWithTheNewAttributes) {
    start(config(10'000)); // MDCACHE may keep the attributes 10 s
    ASSERT_TRUE(flexfiles::admin_cli::wait_until_registered(*cluster_->dbus()));
    Written w = written_file("mdcache");
    const Fattr warm = getattr(w.file); // MDCACHE holds trusted attributes now
    const std::uint64_t overlays =
        flexfiles::admin_cli::counters(*cluster_->dbus())["wcc.getattr_overlays"];
    auto [status, attrs] = wcc_then_getattr(
        w.file, w.layout,
        wcc_body({{&w.layout.files[0], w.post[0]}, {&w.layout.files[1], w.post[1]}}));
    ASSERT_EQ(status, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(attrs.has_value());
    expect_the_written_attributes(*attrs, w);
    EXPECT_GE(attrs->change, warm.change);
    EXPECT_EQ(flexfiles::admin_cli::counters(*cluster_->dbus())["wcc.getattr_overlays"], overlays)
        << "MDCACHE asked the FSAL for attributes after the LAYOUT_WCC";
}

// Without LAYOUT_WCC, once the cached attributes are older than WCC_Max_Age, GETATTR asks
// each mirror's data server once and answers what they say.
void without_wcc_each_mirror_is_asked_once(WccGetattrBase& t) {
    WccGetattrBase::Written w = t.written_file("nowcc");
    t.let_caches_expire();
    const auto before = t.all_ds_getattrs();
    Fattr a = t.getattr(w.file);
    EXPECT_EQ(a.size, kMiB);
    EXPECT_EQ(a.time_modify, nfs4_time(WccGetattrBase::freshest(w.post).mtime));
    EXPECT_EQ(t.per_mirror_delta(w.layout, before), (std::vector<std::uint64_t>{1, 1}));
    EXPECT_EQ(t.total_delta(before), 2u);
}

TEST_F(WccGetattr, WithoutWccEachMirrorIsAskedOnce) {
    start(config(200));
    without_wcc_each_mirror_is_asked_once(*this);
}

// The same with MDCACHE asking the FSAL on every GETATTR (Attr_Expiration_Time = 0).
TEST_F(WccGetattr, WithoutWccEachMirrorIsAskedOnceAttrExpirationZero) {
    start(config(200, 500, true, 0));
    without_wcc_each_mirror_is_asked_once(*this);
}

// 50 clients' GETATTRs of a busy file at once: at most one data-server GETATTR per data
// file in a WCC_Max_Age window.
void fifty_concurrent_getattrs(WccGetattrBase& t) {
    WccGetattrBase::Written w = t.written_file("busy");
    t.let_caches_expire();
    const auto before = t.all_ds_getattrs();
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<int> right_size{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 50; ++i)
        clients.emplace_back([&] {
            try {
                if (t.getattr(w.file).size == kMiB)
                    right_size++;
            } catch (const std::exception&) {
            }
        });
    for (auto& c : clients)
        c.join();
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(right_size.load(), 50);
    ASSERT_LT(took, std::chrono::milliseconds(t.cfg_.wcc_max_age_ms)) << "not one window";
    for (std::uint64_t d : t.per_mirror_delta(w.layout, before))
        EXPECT_EQ(d, 1u);
    EXPECT_EQ(t.total_delta(before), 2u);
}

TEST_F(WccGetattr, FiftyConcurrentGetattrsOneDsGetattrPerDataFile) {
    start(config(1000));
    fifty_concurrent_getattrs(*this);
}

TEST_F(WccGetattr, FiftyConcurrentGetattrsAttrExpirationZero) {
    start(config(1000, 500, true, 0));
    fifty_concurrent_getattrs(*this);
}

// A data server that stops answering costs GETATTR its deadline, not a hang: the last
// known attributes are served.
TEST_F(WccGetattr, StoppedDataServerAnswersWithinDeadline) {
    start(config(200, 500));
    Written w = written_file("stopped");
    // The MDS learns the size (LAYOUT_WCC), then one mirror's server freezes.
    auto [status, attrs] = wcc_then_getattr(
        w.file, w.layout,
        wcc_body({{&w.layout.files[0], w.post[0]}, {&w.layout.files[1], w.post[1]}}));
    ASSERT_EQ(status, static_cast<std::uint32_t>(NFS4_OK));
    let_caches_expire();
    ASSERT_TRUE(cluster_->ds(w.layout.files[1].ds_index).signal(SIGSTOP));
    const auto t0 = std::chrono::steady_clock::now();
    Fattr a = getattr(w.file);
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(a.size, kMiB);
    RecordProperty(
        "getattr_ms",
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
    EXPECT_LT(took, 600ms) << "deadline 500 ms + 100 ms";
    EXPECT_GE(took, 400ms) << "the stopped server was not asked";
    cluster_->ds(w.layout.files[1].ds_index).signal(SIGCONT);
}

// A report older than what the MDS knows (older time_metadata) changes nothing.
TEST_F(WccGetattr, StaleWccChangesNothing) {
    start(config(60000));
    Written w = written_file("stale");
    auto [st1, a1] = wcc_then_getattr(
        w.file, w.layout,
        wcc_body({{&w.layout.files[0], w.post[0]}, {&w.layout.files[1], w.post[1]}}));
    ASSERT_EQ(st1, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(a1.has_value());
    ASSERT_EQ(a1->size, kMiB);

    std::vector<Nfs3Attr> old = w.post;
    for (Nfs3Attr& a : old) {
        a.size = 4096;
        a.used = 4096;
        a.ctime.seconds -= 10;
        a.mtime.seconds -= 10;
    }
    const auto before = all_ds_getattrs();
    auto [st2, a2] = wcc_then_getattr(
        w.file, w.layout, wcc_body({{&w.layout.files[0], old[0]}, {&w.layout.files[1], old[1]}}));
    EXPECT_EQ(st2, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(a2.has_value());
    EXPECT_EQ(a2->size, kMiB);
    EXPECT_EQ(a2->time_modify, nfs4_time(freshest(w.post).mtime));
    EXPECT_EQ(total_delta(before), 0u);
}

// A client that got NFS3ERR_ACCES reports the data file's real owner: the MDS sets the
// fencing owner back, and the next WRITE with the layout's credentials works.
TEST_F(WccGetattr, AccessPathWccRepairsTheOwner) {
    start();
    Written w = written_file("access", 4096);
    const LayoutDataFile& df = w.layout.files[0];
    // Something changed the data file's owner behind the MDS's back.
    Nfs3Client root(cluster_->ds(df.ds_index).nfs3_url());
    Nfs3SetAttrs owner;
    owner.uid = 4242;
    owner.gid = 4242;
    Nfs3SetattrResult set = root.setattr(df.fh, owner);
    ASSERT_EQ(set.status, Nfs3Status::ok);
    ASSERT_TRUE(set.obj_wcc.after.has_value());
    auto client = ds_client(df);
    const std::vector<std::uint8_t> bytes(4096, 0x5a);
    ASSERT_EQ(client->write(df.fh, 0, bytes).status, Nfs3Status::acces);

    auto [status, attrs] =
        wcc_then_getattr(w.file, w.layout, wcc_body({{&df, *set.obj_wcc.after}}));
    ASSERT_EQ(status, static_cast<std::uint32_t>(NFS4_OK));

    Nfs3Status last = Nfs3Status::acces;
    for (int i = 0; i < 60 && last != Nfs3Status::ok; ++i) {
        std::this_thread::sleep_for(50ms);
        last = client->write(df.fh, 0, bytes).status;
    }
    EXPECT_EQ(last, Nfs3Status::ok) << "the data file's owner was not repaired";
}

// A body that does not decode is NFS4ERR_BADXDR, an attribute outside Table 1
// NFS4ERR_INVAL, and neither changes what GETATTR answers.
TEST_F(WccGetattr, BadBodiesChangeNothing) {
    start(config(60000));
    Written w = written_file("bad");
    auto [st0, a0] = wcc_then_getattr(
        w.file, w.layout,
        wcc_body({{&w.layout.files[0], w.post[0]}, {&w.layout.files[1], w.post[1]}}));
    ASSERT_EQ(st0, static_cast<std::uint32_t>(NFS4_OK));

    std::vector<Nfs3Attr> newer = w.post;
    for (Nfs3Attr& a : newer) {
        a.size = 77;
        a.ctime.seconds += 10;
    }
    std::vector<char> garbage = wcc_body({{&w.layout.files[0], newer[0]}});
    garbage.resize(garbage.size() - 4); // truncated
    EXPECT_EQ(wcc_then_getattr(w.file, w.layout, garbage).first,
              static_cast<std::uint32_t>(NFS4ERR_BADXDR));
    // A good first entry and a second one that names an attribute outside Table 1.
    EXPECT_EQ(wcc_then_getattr(w.file, w.layout,
                               wcc_body({{&w.layout.files[0], newer[0]},
                                         {&w.layout.files[1], newer[1], FATTR4_TYPE}}))
                  .first,
              static_cast<std::uint32_t>(NFS4ERR_INVAL));
    EXPECT_EQ(getattr(w.file).size, kMiB);
    // Only mirror 1, with an empty mask for mirror 0: valid.
    auto [st, a] = wcc_then_getattr(
        w.file, w.layout,
        wcc_body({{&w.layout.files[0], std::nullopt}, {&w.layout.files[1], newer[1]}}));
    EXPECT_EQ(st, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->size, 77u);
}

// Trust_WCC = false: LAYOUT_WCC is answered NFS4_OK and ignored.
TEST_F(WccGetattr, TrustWccOffIgnoresReports) {
    start(config(60000, 500, false));
    Written w = written_file("untrusted");
    std::vector<Nfs3Attr> lie = w.post;
    for (Nfs3Attr& a : lie) {
        a.size = 12345;
        a.ctime.seconds += 100;
    }
    auto [status, attrs] = wcc_then_getattr(
        w.file, w.layout, wcc_body({{&w.layout.files[0], lie[0]}, {&w.layout.files[1], lie[1]}}));
    EXPECT_EQ(status, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(attrs.has_value());
    EXPECT_NE(attrs->size, 12345u);
}
