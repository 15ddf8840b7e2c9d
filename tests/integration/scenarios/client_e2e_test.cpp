// SPDX-License-Identifier: LGPL-3.0-or-later
//
// End-to-end scenarios of issue 6 with the pNFS flex-files client (tools/client) against
// real processes: 1 MDS (FLEXFILES over VFS, Mirrors = 2) + 3 NFSv3 data servers.
//
//   Put4MiB...            4 MiB through an RW layout to both mirrors; LAYOUT_WCC + GETATTR
//                         gives the exact size and the data servers' mtime; read back
//                         through the layout (each mirror) and through the MDS (no layout).
//   TwoClients...         two sessions write two files at once through layouts.
//   RecalledLayout...     a second client's write-open fences and recalls the first's
//                         layout: the first's data-server WRITEs get NFS3ERR_ACCES and its
//                         LAYOUT_WCC with the old layout stateid is refused; the size holds.
//   ReadLayout...         a READ-layout holder's LAYOUT_WCC cannot change the size (an RW
//                         holder's claim, the control, does).
#include "client/flex_file.hpp"
#include "client/layout_wcc.hpp"
#include "client/nfs4_names.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
namespace fh = flexfiles::harness;
namespace fc = flexfiles::client;
namespace v3 = flexfiles::client::nfs3;

namespace {

constexpr std::size_t kMiB = 1u << 20;

std::vector<char> pattern(std::size_t n, unsigned seed) {
    std::vector<char> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<char>(seed * 131 + i * 7 + (i >> 12));
    return v;
}

fc::NfsTime nfs4_time(const v3::Time& t) {
    return fc::NfsTime{t.seconds, t.nseconds};
}

// LAYOUT_WCC's status and, when it passed, GETATTR's attributes.
struct WccReply {
    std::optional<std::uint32_t> wcc_status;
    std::optional<fc::Fattr> attrs;
};

class ClientE2e : public ::testing::Test {
protected:
    void SetUp() override {
        fh::ClusterOptions options;
        options.configure_mds = [](fh::ServerOptions& mds,
                                   const std::vector<fh::DataServerInfo>& ds) {
            mds.exports[0].pseudo = "/ff";
            fh::FlexfilesOptions ff;
            ff.mirrors = 2;
            mds.exports[0].fsal = fh::flexfiles_fsal_block(ds, ff);
        };
        cluster_ = std::make_unique<fh::Cluster>(options);
    }

    void TearDown() override {
        if (cluster_) {
            EXPECT_TRUE(cluster_->mds().error_lines().empty())
                << ::testing::PrintToString(cluster_->mds().error_lines());
        }
    }

    std::unique_ptr<fc::Session> open_session() {
        fc::SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.minor_version = 2;
        o.timeout = 10s;
        return fc::Session::open(o);
    }

    static fc::FlexOpenOptions create_options() {
        fc::FlexOpenOptions o;
        o.create = true;
        o.truncate = true;
        return o;
    }

    // SEQUENCE, PUTFH, LAYOUT_WCC(stateid, body), GETATTR: what a client sends, with any
    // layout stateid and body.
    static WccReply layout_wcc_getattr(fc::Session& s, const fc::FileHandle& file,
                                       const stateid4& layout_stateid,
                                       const std::vector<char>& body) {
        fc::Compound c;
        c.putfh(file)
            .layout_wcc(layout_stateid, LAYOUT4_FLEX_FILES, body)
            .getattr(fc::wcc_getattr_attrs());
        fc::CompoundResult r = s.send(c);
        WccReply out;
        EXPECT_TRUE(r.replied()) << r.error;
        out.wcc_status = r.status_of(1);
        if (r.ok())
            out.attrs = r.attrs(2);
        return out;
    }

    // The size the MDS answers to a plain GETATTR.
    static std::uint64_t mds_size(fc::Session& s, const std::string& path) {
        return fc::stat_path(s, path).attrs.size.value_or(~0ull);
    }

    // A body claiming every data file of `f`'s layout grew to `size`, with times
    // `ahead` seconds newer than the data servers' (so it is not ignored as stale).
    static std::vector<char> claim_body(const fc::FlexFile& f, std::uint64_t size, int ahead) {
        fc::FlexLayoutWcc body = f.layout_wcc();
        for (auto& m : body.mirrors) {
            for (auto& d : m.data_servers) {
                EXPECT_TRUE(d.attrs.time_metadata.has_value()) << "no attributes to start from";
                d.attrs.size = size;
                d.attrs.space_used = size;
                for (auto* t : {&d.attrs.time_modify, &d.attrs.time_metadata})
                    if (*t)
                        (*t)->seconds += ahead;
            }
        }
        return fc::encode_flex_layout_wcc(body);
    }

    // The freshest data file's mtime, asked of the data servers directly.
    v3::Time data_servers_mtime(fc::PnfsClient& pnfs, const fc::FlexFile& f) {
        v3::Time newest{};
        for (const fc::FlexDataFile& d : f.data_files()) {
            const v3::GetattrResult g =
                pnfs.data_server(d.address)->getattr(fc::AuthSys{}, d.ds.fh());
            EXPECT_TRUE(g.ok()) << g.describe();
            if (g.ok() && g.attrs && g.attrs->mtime > newest)
                newest = g.attrs->mtime;
        }
        return newest;
    }

    std::unique_ptr<fh::Cluster> cluster_;
};

} // namespace

TEST_F(ClientE2e, Put4MiBWithTwoMirrorsThenGetViaLayoutAndViaMds) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    const auto data = pattern(4 * kMiB, 21);
    {
        auto f = fc::FlexFile::open(pnfs, "/ff/put", create_options());
        ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
        ASSERT_EQ(f->layout().mirrors.size(), 2u);
        ASSERT_EQ(f->data_files().size(), 2u);
        EXPECT_NE(f->data_files()[0].address, f->data_files()[1].address);
        f->write(0, data);
        const fc::IoOutcome c = f->commit();
        ASSERT_TRUE(c.ok()) << c.describe();

        const fc::WccGetattr g = f->send_layout_wcc_and_getattr();
        ASSERT_EQ(g.wcc_status, std::optional<std::uint32_t>(NFS4_OK));
        EXPECT_EQ(g.compounds, 1);
        EXPECT_EQ(g.attrs.size, std::optional<std::uint64_t>(data.size()));
        // time_modify is the data servers' (the freshest mirror's), not the MDS's own.
        const v3::Time ds_mtime = data_servers_mtime(pnfs, *f);
        EXPECT_EQ(g.attrs.time_modify, std::optional<fc::NfsTime>(nfs4_time(ds_mtime)));

        // Back through the layout, from each mirror.
        EXPECT_TRUE(f->read_all(0) == data) << "mirror 0";
        EXPECT_TRUE(f->read_all(1) == data) << "mirror 1";
        f->layoutreturn(false);
        f->close();
    }

    // Back through the MDS: another session, no layout, plain NFSv4.2 READs that the MDS
    // proxies to a data server.
    auto reader = open_session();
    fc::OpenFile r = fc::open_path(*reader, "/ff/put", {});
    EXPECT_EQ(r.attrs.size, std::optional<std::uint64_t>(data.size()));
    const std::vector<char> back = fc::read_all(*reader, r);
    fc::close_file(*reader, r);
    EXPECT_EQ(back.size(), data.size());
    EXPECT_TRUE(back == data) << "the MDS proxy path returned other bytes";
}

TEST_F(ClientE2e, TwoClientsWriteTwoFilesConcurrentlyThroughLayouts) {
    constexpr std::size_t kSize = 3 * kMiB + 4321;
    constexpr std::size_t kPiece = 256 * 1024;
    struct Writer {
        std::string path;
        std::vector<char> data;
        std::optional<std::uint32_t> wcc_status;
        std::optional<std::uint64_t> size;
        std::string error;
    };
    std::vector<Writer> writers{{"/ff/one", pattern(kSize, 31), {}, {}, {}},
                                {"/ff/two", pattern(kSize, 32), {}, {}, {}}};
    std::atomic<int> ready{0};
    auto write = [&](Writer& w) {
        try {
            auto s = open_session();
            fc::PnfsClient pnfs(*s);
            auto f = fc::FlexFile::open(pnfs, w.path, create_options());
            if (const std::uint32_t st = f->layoutget(LAYOUTIOMODE4_RW); st != NFS4_OK)
                throw std::runtime_error("LAYOUTGET " + fc::status_name(st));
            // Both clients hold their layouts before either writes: the writes overlap.
            ready++;
            while (ready.load() < 2)
                std::this_thread::sleep_for(1ms);
            for (std::size_t off = 0; off < w.data.size(); off += kPiece) {
                const std::size_t n = std::min(kPiece, w.data.size() - off);
                f->write(off, std::span(w.data).subspan(off, n));
            }
            if (const fc::IoOutcome c = f->commit(); !c.ok())
                throw std::runtime_error("COMMIT " + c.describe());
            const fc::WccGetattr g = f->send_layout_wcc_and_getattr();
            w.wcc_status = g.wcc_status;
            w.size = g.attrs.size;
            f->layoutreturn(false);
            f->close();
        } catch (const std::exception& e) {
            w.error = e.what();
            ready += 2; // never leave the other thread waiting
        }
    };
    std::thread a(write, std::ref(writers[0]));
    std::thread b(write, std::ref(writers[1]));
    a.join();
    b.join();

    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    for (const Writer& w : writers) {
        SCOPED_TRACE(w.path);
        ASSERT_TRUE(w.error.empty()) << w.error;
        EXPECT_EQ(w.wcc_status, std::optional<std::uint32_t>(NFS4_OK));
        EXPECT_EQ(w.size, std::optional<std::uint64_t>(kSize)) << "LAYOUT_WCC + GETATTR";
        EXPECT_EQ(mds_size(*s, w.path), kSize) << "GETATTR after LAYOUTRETURN and CLOSE";
        fc::FlexOpenOptions ro;
        ro.access = OPEN4_SHARE_ACCESS_READ;
        auto f = fc::FlexFile::open(pnfs, w.path, ro);
        ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
        for (std::size_t m = 0; m < f->layout().mirrors.size(); ++m)
            EXPECT_TRUE(f->read_all(m) == w.data) << "mirror " << m;
        f->layoutreturn(false);
        f->close();
    }
}

TEST_F(ClientE2e, RecalledLayoutWritesAreRefusedAndItsLayoutWccIsRejected) {
    auto first = open_session();
    auto second = open_session();
    fc::PnfsClient pnfs(*first);
    // The recall's lor_stateid (the layout stateid as the recall left it), then the usual
    // handling (the layout marked recalled).
    std::mutex recall_mu;
    std::optional<stateid4> recall_stateid;
    first->set_callback_handler([&](const nfs_cb_argop4& op, nfs_cb_resop4&) {
        if (op.argop == NFS4_OP_CB_LAYOUTRECALL &&
            op.nfs_cb_argop4_u.opcblayoutrecall.clora_recall.lor_recalltype == LAYOUTRECALL4_FILE) {
            std::lock_guard lock(recall_mu);
            recall_stateid = op.nfs_cb_argop4_u.opcblayoutrecall.clora_recall.layoutrecall4_u
                                 .lor_layout.lor_stateid;
        }
        std::vector<fc::FileHandle> recalled;
        return pnfs.recalls().handle(op, recalled);
    });

    auto f = fc::FlexFile::open(pnfs, "/ff/contended", create_options());
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    const auto data = pattern(65536, 41);
    f->write(0, data, v3::Stable::file_sync);
    const fc::WccGetattr before = f->send_layout_wcc_and_getattr();
    ASSERT_EQ(before.wcc_status, std::optional<std::uint32_t>(NFS4_OK));
    ASSERT_EQ(before.attrs.size, std::optional<std::uint64_t>(data.size()));
    const stateid4 old_stateid = f->layout().stateid;
    // What the first client claims after the recall: the file grew to 1 MiB (times newer
    // than anything the MDS knows, so the claim is not dismissed as stale).
    const std::vector<char> claim = claim_body(*f, kMiB, 5);

    // The second client opens for write: the MDS fences the data files and recalls.
    fc::OpenOptions both;
    both.access = OPEN4_SHARE_ACCESS_BOTH;
    fc::OpenFile other = fc::open_path(*second, "/ff/contended", both);
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!f->recalled() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(f->recalled()) << "no CB_LAYOUTRECALL within 10 s";
    stateid4 current{};
    {
        std::lock_guard lock(recall_mu);
        ASSERT_TRUE(recall_stateid.has_value());
        current = *recall_stateid;
    }
    ASSERT_EQ(std::memcmp(current.other, old_stateid.other, sizeof current.other), 0);
    ASSERT_GT(current.seqid, old_stateid.seqid) << "the recall moves the layout stateid on";

    // The data servers refuse the first client's WRITEs, on both mirrors.
    for (const fc::FlexDataFile& d : f->data_files()) {
        const v3::WriteResult w = pnfs.data_server(d.address)->write(
            d.ds.credentials(), d.ds.fh(), 0, data, v3::Stable::file_sync);
        EXPECT_EQ(w.status, v3::Status::acces) << "mirror " << d.mirror << ": " << w.describe();
    }

    // Its LAYOUT_WCC before it returns the layout. With the stateid it held before the
    // recall: that seqid is gone.
    const WccReply old_seqid = layout_wcc_getattr(*first, f->fh(), old_stateid, claim);
    EXPECT_EQ(old_seqid.wcc_status, std::optional<std::uint32_t>(NFS4ERR_OLD_STATEID))
        << fc::status_name(old_seqid.wcc_status.value_or(0));
    // With the recall's stateid, which still names the layout: the layout is fenced, so its
    // holder's word no longer counts. RFC 9766 section 3.4.1 has a client send exactly this
    // after NFS4ERR_ACCESS from the data servers: OK, nothing of it applied.
    const WccReply fenced = layout_wcc_getattr(*first, f->fh(), current, claim);
    EXPECT_EQ(fenced.wcc_status, std::optional<std::uint32_t>(NFS4_OK))
        << fc::status_name(fenced.wcc_status.value_or(0));
    ASSERT_TRUE(fenced.attrs.has_value());
    EXPECT_EQ(fenced.attrs->size, std::optional<std::uint64_t>(data.size()))
        << "the fenced layout's report was applied";
    EXPECT_EQ(mds_size(*second, "/ff/contended"), data.size())
        << "a fenced layout's LAYOUT_WCC changed the size";

    // The client answers the recall (with the recall's stateid: the layout was still
    // held); afterwards its layout stateid names nothing.
    f->layoutreturn(false);
    const WccReply returned = layout_wcc_getattr(*first, f->fh(), current, claim);
    EXPECT_EQ(returned.wcc_status, std::optional<std::uint32_t>(NFS4ERR_BAD_STATEID))
        << fc::status_name(returned.wcc_status.value_or(0));
    EXPECT_EQ(mds_size(*second, "/ff/contended"), data.size());
    EXPECT_EQ(mds_size(*first, "/ff/contended"), data.size());

    f->close();
    fc::close_file(*second, other);
}

TEST_F(ClientE2e, ReadLayoutHolderCannotChangeTheSize) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    const auto data = pattern(100000, 51);
    {
        auto w = fc::FlexFile::open(pnfs, "/ff/readonly", create_options());
        ASSERT_EQ(w->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
        w->write(0, data, v3::Stable::file_sync);
        ASSERT_EQ(w->send_layout_wcc_and_getattr().attrs.size,
                  std::optional<std::uint64_t>(data.size()));
        w->layoutreturn(false);
        w->close();
    }

    // Another client opens for reading only and holds a READ layout.
    auto reader_session = open_session();
    fc::PnfsClient reader(*reader_session);
    fc::FlexOpenOptions ro;
    ro.access = OPEN4_SHARE_ACCESS_READ;
    auto r = fc::FlexFile::open(reader, "/ff/readonly", ro);
    ASSERT_EQ(r->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_EQ(r->layout().iomode, static_cast<std::uint32_t>(LAYOUTIOMODE4_READ));
    ASSERT_TRUE(r->refresh_attrs().ok()); // the data files' real attributes to start from

    const WccReply claimed = layout_wcc_getattr(*reader_session, r->fh(), r->layout().stateid,
                                                claim_body(*r, 8 * kMiB, 5));
    ASSERT_TRUE(claimed.wcc_status.has_value());
    // The MDS may ignore any attribute (RFC 9766 3.2): the op succeeds, the size stays.
    EXPECT_EQ(*claimed.wcc_status, static_cast<std::uint32_t>(NFS4_OK))
        << fc::status_name(*claimed.wcc_status);
    ASSERT_TRUE(claimed.attrs.has_value());
    EXPECT_EQ(claimed.attrs->size, std::optional<std::uint64_t>(data.size()));
    EXPECT_EQ(mds_size(*s, "/ff/readonly"), data.size());
    r->layoutreturn(false);
    r->close();

    // The control: the same claim from an RW layout is believed (the weak model), which
    // shows the READ layout's claim above was refused for its iomode, not ignored by chance.
    auto w = fc::FlexFile::open(pnfs, "/ff/readonly", fc::FlexOpenOptions{});
    ASSERT_EQ(w->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(w->refresh_attrs().ok());
    const WccReply rw =
        layout_wcc_getattr(*s, w->fh(), w->layout().stateid, claim_body(*w, 8 * kMiB, 5));
    EXPECT_EQ(rw.wcc_status, std::optional<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(rw.attrs.has_value());
    EXPECT_EQ(rw.attrs->size, std::optional<std::uint64_t>(8 * kMiB));
    w->layoutreturn(false);
    w->close();
}
