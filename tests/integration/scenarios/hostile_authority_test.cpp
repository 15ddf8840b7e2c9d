// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Authority at grant time (issue #13, item 2), tried as a hostile client would:
//   * a READ layout's synthetic credentials read the data files and cannot write them (the
//     data server answers NFS3ERR_ACCES), while the RW layout's credentials write;
//   * LAYOUTGET(RW) is refused without an open for write (NFS4ERR_OPENMODE), on an export
//     that is read-only for the client (NFS4ERR_ACCESS), and to a user the file's
//     permissions no longer let write (NFS4ERR_ACCESS);
// each refusal counted by reason in the export's layout counters (dbus GetStats, read
// here through `ganesha-ff --json stats`), with nothing granted.
//
// Cluster: 1 MDS (FLEXFILES over VFS at /ff, Mirrors = 2) + 3 NFSv3 data servers, on a
// private dbus.
#include "admin_cli_support.hpp"
#include "layout_test_support.hpp"

#include <filesystem>
#include <map>

using namespace flexfiles::layout_test;
namespace admin_cli = flexfiles::admin_cli;
using namespace std::chrono_literals;

namespace {

const std::optional<std::uint32_t> kOk{NFS4_OK};

class HostileAuthority : public FlexfilesCluster {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(admin_cli::binary())) << admin_cli::binary();
        start_cluster({.with_dbus = true});
        wait_for_dbus();
    }

    std::unique_ptr<Session> session_as(std::uint32_t uid, std::uint32_t gid) {
        SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.cred.uid = uid;
        o.cred.gid = gid;
        return Session::open(o);
    }

    // The interface registers a moment after the server answers NFS.
    void wait_for_dbus() {
        ASSERT_TRUE(admin_cli::wait_until_registered(*cluster_->dbus()))
            << "the FLEXFILES dbus interface never appeared";
    }

    // The export's layout counters (`ganesha-ff --json stats`, "layout.<name>"), by name.
    std::map<std::string, std::uint64_t> layout_stats() {
        const CommandResult r = admin_cli::run(*cluster_->dbus(), {"--json", "stats"});
        EXPECT_TRUE(r.ok()) << r.output;
        std::map<std::string, std::uint64_t> out;
        for (const auto& [name, value] : admin_cli::counters_of(r.output))
            if (name.starts_with("layout."))
                out[name.substr(7)] = value;
        EXPECT_FALSE(out.empty()) << r.output;
        return out;
    }

    // A counter, or a test failure naming it when the server does not report it.
    static std::uint64_t counter(const std::map<std::string, std::uint64_t>& stats,
                                 const std::string& name) {
        const auto it = stats.find(name);
        EXPECT_TRUE(it != stats.end()) << "no counter layout." << name;
        return it == stats.end() ? ~0ull : it->second;
    }

    // PUTFH, WRITE through the MDS; its status.
    static std::optional<std::uint32_t> mds_write(Session& s, const OpenFile& f,
                                                  const std::vector<char>& data) {
        Compound c;
        c.putfh(f.fh).write(f.stateid, 0, data, FILE_SYNC4);
        return s.send(c).status_of(1);
    }
};

std::vector<char> chars(const std::vector<std::uint8_t>& v) {
    return {v.begin(), v.end()};
}

} // namespace

// RFC 8435 section 2.2: a READ layout carries a uid other than the data file's owner and
// the data file's group; the data file's mode (0640) lets the group read and not write.
TEST_F(HostileAuthority, ReadLayoutCredentialsReadButCannotWrite) {
    auto writer = open_session();
    OpenFile w = create_rw(*writer, "/ff/victim");
    const Layout rw = must_layoutget(*writer, w.fh, w.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(rw.mirrors.size(), 2u);
    const auto original = pattern(8192, 3);
    for (const auto& mirror : rw.mirrors) {
        const DataServerInfo* info = ds_of(*writer, mirror[0]);
        ASSERT_NE(info, nullptr);
        Nfs3Client as_rw(info->nfs3_url(), mirror[0].creds());
        ASSERT_EQ(as_rw.write(mirror[0].fh_vers[0], 0, original, Nfs3Stable::file_sync).status,
                  Nfs3Status::ok)
            << "the RW layout's credentials write";
    }

    auto reader = open_session();
    const OpenFile r = open_path(*reader, "/ff/victim", {}); // OPEN4_SHARE_ACCESS_READ
    const Layout ro = must_layoutget(*reader, r.fh, r.stateid, LAYOUTIOMODE4_READ);
    ASSERT_EQ(ro.mirrors.size(), 2u);
    for (std::size_t m = 0; m < 2; m++) {
        SCOPED_TRACE("mirror " + std::to_string(m));
        const LayoutDs& mine = ro.mirrors[m][0];
        const LayoutDs& theirs = rw.mirrors[m][0];
        ASSERT_EQ(mine.fh_vers[0], theirs.fh_vers[0]) << "the same data file";
        EXPECT_NE(mine.user, theirs.user) << "a READ layout must not carry the owner's uid";
        EXPECT_EQ(mine.group, theirs.group) << "the data file's group";
        const Nfs3Credentials read_creds = mine.creds();
        EXPECT_NE(read_creds.uid, 0u) << "never root";
        EXPECT_TRUE(read_creds.uid < kFencingMin || read_creds.uid > kFencingMax)
            << "outside the fencing range, so no fencing ever makes it an owner";

        const DataServerInfo* info = ds_of(*reader, mine);
        ASSERT_NE(info, nullptr);
        Nfs3Client root(info->nfs3_url());
        const Nfs3GetattrResult a = root.getattr(mine.fh_vers[0]);
        ASSERT_EQ(a.status, Nfs3Status::ok);
        EXPECT_EQ(a.attr.mode & 07777, 0640u) << "owner writes, group reads";
        EXPECT_EQ(a.attr.uid, theirs.creds().uid);
        EXPECT_EQ(a.attr.gid, theirs.creds().gid);

        Nfs3Client as_reader(info->nfs3_url(), read_creds);
        const Nfs3ReadResult got = as_reader.read(mine.fh_vers[0], 0, 8192);
        EXPECT_EQ(got.status, Nfs3Status::ok) << "the READ layout reads";
        EXPECT_EQ(got.data, original);
        const auto forged = pattern(4096, 99);
        EXPECT_EQ(as_reader.write(mine.fh_vers[0], 0, forged, Nfs3Stable::file_sync).status,
                  Nfs3Status::acces)
            << "the data server must refuse a WRITE with a READ layout's credentials";
        EXPECT_EQ(root.read(mine.fh_vers[0], 0, 8192).data, original) << "nothing changed";
    }
    EXPECT_TRUE(cluster_->mds().error_lines().empty());
}

// LAYOUTGET(RW) on an open for reading only: the holder would have authority for
// LAYOUTCOMMIT and LAYOUT_WCC size/mtime. Refused with NFS4ERR_OPENMODE and counted; the
// READ layout of the same open is still granted, and after an open upgrade the RW layout is.
TEST_F(HostileAuthority, RwLayoutOnReadOnlyOpenIsRefused) {
    {
        auto creator = open_session();
        OpenFile f = create_rw(*creator, "/ff/readonly-open");
        close_file(*creator, f);
    }
    const auto before = layout_stats();

    auto attacker = open_session();
    const OpenFile r = open_path(*attacker, "/ff/readonly-open", {}); // READ only
    const LayoutGetResult refused = layoutget(*attacker, r.fh, r.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(refused.status, std::optional<std::uint32_t>(NFS4ERR_OPENMODE)) << refused.error;
    EXPECT_FALSE(refused.layout.has_value());

    const auto after = layout_stats();
    EXPECT_EQ(counter(after, "layoutgets_rw_refused_open"),
              counter(before, "layoutgets_rw_refused_open") + 1);
    EXPECT_EQ(counter(after, "layoutgets_rw"), counter(before, "layoutgets_rw"));
    EXPECT_EQ(counter(after, "segments_granted_now"), 0u);

    // Reading is what the open allows.
    const Layout ro = must_layoutget(*attacker, r.fh, r.stateid, LAYOUTIOMODE4_READ);
    EXPECT_EQ(ro.iomode, LAYOUTIOMODE4_READ);

    // The same open owner upgrades its open to read-write: now it may write.
    OpenOptions both;
    both.access = OPEN4_SHARE_ACCESS_BOTH;
    const OpenFile upgraded = open_path(*attacker, "/ff/readonly-open", both);
    const Layout rw = must_layoutget(*attacker, upgraded.fh, upgraded.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(rw.iomode, LAYOUTIOMODE4_RW);
}

// An export that is read-only for the client (Access_Type = RO): no open for write exists
// (OPEN answers NFS4ERR_ROFS), and LAYOUTGET(RW) on a read-only open is refused by the
// export check first (NFS4ERR_ACCESS, counted as such). The file keeps its data files (the
// export was RW when it was written); READ layouts still read it.
TEST_F(HostileAuthority, RwLayoutOnReadOnlyExportIsRefused) {
    const auto data = pattern(5000, 7);
    {
        auto creator = open_session();
        OpenFile f = create_rw(*creator, "/ff/frozen");
        write_all(*creator, f, 0, chars(data)); // through the MDS
        close_file(*creator, f);
    }
    GaneshaServer& mds = cluster_->mds();
    mds.stop();
    mds.mutable_options().exports[0].access_type = "RO";
    mds.start();
    wait_for_dbus();
    const auto before = layout_stats();

    auto s = open_session();
    OpenOptions both;
    both.access = OPEN4_SHARE_ACCESS_BOTH;
    try {
        open_path(*s, "/ff/frozen", both);
        ADD_FAILURE() << "OPEN for write succeeded on a read-only export";
    } catch (const NfsError& e) {
        EXPECT_EQ(e.status(), static_cast<std::uint32_t>(NFS4ERR_ROFS)) << e.what();
    }
    const OpenFile r = open_path(*s, "/ff/frozen", {});
    const LayoutGetResult refused = layoutget(*s, r.fh, r.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(refused.status, std::optional<std::uint32_t>(NFS4ERR_ACCESS)) << refused.error;
    EXPECT_FALSE(refused.layout.has_value());

    const auto after = layout_stats();
    EXPECT_EQ(counter(after, "layoutgets_rw_refused_export"),
              counter(before, "layoutgets_rw_refused_export") + 1);
    EXPECT_EQ(counter(after, "layoutgets_rw_refused_open"),
              counter(before, "layoutgets_rw_refused_open"))
        << "the export check comes first";
    EXPECT_EQ(counter(after, "layoutgets_rw"), counter(before, "layoutgets_rw"));

    const Layout ro = must_layoutget(*s, r.fh, r.stateid, LAYOUTIOMODE4_READ);
    ASSERT_EQ(ro.mirrors.size(), 2u);
    const DataServerInfo* info = ds_of(*s, ro.mirrors[0][0]);
    ASSERT_NE(info, nullptr);
    Nfs3Client as_reader(info->nfs3_url(), ro.mirrors[0][0].creds());
    EXPECT_EQ(as_reader.read(ro.mirrors[0][0].fh_vers[0], 0, 8192).data, data);
}

// The same permission check as a WRITE: a user who opened the file for write while it was
// writable for everyone, and lost write permission since (chmod 0644 by its owner), gets
// NFS4ERR_ACCESS from LAYOUTGET(RW) as from WRITE through the MDS.
TEST_F(HostileAuthority, RwLayoutWithoutWritePermissionIsRefused) {
    auto owner = open_session(); // root
    OpenOptions create;
    create.access = OPEN4_SHARE_ACCESS_BOTH;
    create.create = true;
    create.mode = 0666;
    OpenFile mine = open_path(*owner, "/ff/shared-once", create);

    auto user = session_as(5000, 5000);
    OpenOptions both;
    both.access = OPEN4_SHARE_ACCESS_BOTH;
    const OpenFile theirs = open_path(*user, "/ff/shared-once", both);
    ASSERT_EQ(mds_write(*user, theirs, chars(pattern(10, 1))), kOk) << "writable for now";

    Fattr mode;
    mode.mode = 0644;
    Compound c;
    c.putfh(mine.fh).setattr(mine.stateid, mode);
    ASSERT_TRUE(owner->send(c).ok());
    const auto before = layout_stats();

    EXPECT_EQ(mds_write(*user, theirs, chars(pattern(10, 2))),
              std::optional<std::uint32_t>(NFS4ERR_ACCESS))
        << "WRITE's own permission check";
    const LayoutGetResult refused = layoutget(*user, theirs.fh, theirs.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(refused.status, std::optional<std::uint32_t>(NFS4ERR_ACCESS)) << refused.error;

    const auto after = layout_stats();
    EXPECT_EQ(counter(after, "layoutgets_rw_refused_access"),
              counter(before, "layoutgets_rw_refused_access") + 1);
    EXPECT_EQ(counter(after, "layoutgets_rw"), counter(before, "layoutgets_rw"));

    // The owner (and root) may still write: an RW layout for them.
    EXPECT_EQ(must_layoutget(*owner, mine.fh, mine.stateid, LAYOUTIOMODE4_RW).iomode,
              LAYOUTIOMODE4_RW);
}

// An open upgrade is an open for write: a client that opened for reading and upgrades
// (OPEN again, same open owner, OPEN4_SHARE_ACCESS_BOTH: Ganesha's reopen2) gets RW layouts
// from then on, so the other writers are fenced first, as for a new open for write.
TEST_F(HostileAuthority, OpenUpgradeFencesOtherWriters) {
    auto first = open_session();
    OpenFile w = create_rw(*first, "/ff/upgraded");
    const Layout theirs = must_layoutget(*first, w.fh, w.stateid, LAYOUTIOMODE4_RW);
    const DataServerInfo* info = ds_of(*first, theirs.mirrors[0][0]);
    ASSERT_NE(info, nullptr);
    Nfs3Client as_first(info->nfs3_url(), theirs.mirrors[0][0].creds());
    const auto data = pattern(4096, 5);
    ASSERT_EQ(as_first.write(theirs.mirrors[0][0].fh_vers[0], 0, data).status, Nfs3Status::ok);

    auto second = open_session();
    (void)open_path(*second, "/ff/upgraded", {}); // READ: fences nobody
    EXPECT_EQ(as_first.write(theirs.mirrors[0][0].fh_vers[0], 0, data).status, Nfs3Status::ok);
    OpenOptions both;
    both.access = OPEN4_SHARE_ACCESS_BOTH;
    const OpenFile upgraded = open_path(*second, "/ff/upgraded", both);
    EXPECT_EQ(as_first.write(theirs.mirrors[0][0].fh_vers[0], 0, data).status, Nfs3Status::acces)
        << "the first writer must be fenced before the upgraded open returns";
    const Layout mine = must_layoutget(*second, upgraded.fh, upgraded.stateid, LAYOUTIOMODE4_RW);
    EXPECT_NE(mine.mirrors[0][0].user, theirs.mirrors[0][0].user);
}
