// SPDX-License-Identifier: LGPL-3.0-or-later
//
// pNFS device notifications (RFC 8881 sections 18.40.3 and 20.12): GETDEVICEINFO grants
// the NOTIFY_DEVICEID4_CHANGE and NOTIFY_DEVICEID4_DELETE a client asks for (the Linux
// client caches a device only when it gets exactly what it asked for), and the MDS sends
// CB_NOTIFY_DEVICEID to the clients granted it when an administrator drains (CHANGE, not
// immediate) or removes (DELETE) a data server with ganesha-ff (pnfs/device_notify.hpp).
//
// Cluster: 1 MDS (FLEXFILES over VFS, Mirrors = 1) + 3 NFSv3 data servers (Id 1..3) and a
// private bus for the admin CLI. No file is created, so every data server may be removed.
#include "admin_cli_support.hpp"
#include "client/device_notify.hpp"
#include "client/nfs4_names.hpp"
#include "client/pnfs_client.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"
#include "layout_test_support.hpp"
#include "model/deviceid.hpp"

#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <thread>

using namespace std::chrono_literals;
using namespace flexfiles::harness;
namespace fc = flexfiles::client;
namespace admin_cli = flexfiles::admin_cli;

namespace {

constexpr std::uint32_t kChange = fc::kNotifyDeviceChange;
constexpr std::uint32_t kDelete = fc::kNotifyDeviceDelete;

// The deviceid of data server `id` (model/deviceid.hpp: FSAL_ID_EXPERIMENTAL, format, "FF",
// the Id big-endian), as layouts carry it.
fc::DeviceId4 device_of(std::uint64_t id) {
    const auto dev = flexfiles::fleet::make_deviceid(id);
    fc::DeviceId4 out{};
    std::memcpy(out.data(), dev.data(), out.size());
    return out;
}

struct Grant {
    std::uint32_t status = NFS4ERR_SERVERFAULT;
    std::uint32_t words = 0;         // gdir_notification's length
    std::uint32_t notifications = 0; // its first word
};

class DeviceNotify : public flexfiles::layout_test::FlexfilesCluster {
protected:
    void SetUp() override {
        ASSERT_TRUE(std::filesystem::exists(admin_cli::binary())) << admin_cli::binary();
        start_cluster({.mirrors = 1, .with_dbus = true});
        ASSERT_TRUE(admin_cli::wait_until_registered(*cluster_->dbus()));
    }

    // An NFSv4.2 session whose back channel can take the notifications.
    std::unique_ptr<fc::Session> open_session() {
        auto s = FlexfilesCluster::open_session();
        EXPECT_TRUE(s->has_back_channel());
        return s;
    }

    // GETDEVICEINFO of `dev` asking for `notify_types`.
    static Grant getdeviceinfo(fc::Session& s, const fc::DeviceId4& dev,
                               std::uint32_t notify_types) {
        fc::Compound c;
        c.getdeviceinfo(dev, LAYOUT4_FLEX_FILES, 4096, notify_types);
        const fc::CompoundResult r = s.send(c);
        Grant g;
        if (!r.replied())
            return g;
        g.status = r.status_of(0).value_or(NFS4ERR_SERVERFAULT);
        if (g.status == NFS4_OK) {
            const bitmap4& n = r.getdeviceinfo(0).gdir_notification;
            g.words = n.bitmap4_len;
            g.notifications = n.bitmap4_len > 0 ? n.map[0] : 0;
        }
        return g;
    }

    void cli(std::vector<std::string> args) {
        const CommandResult r = admin_cli::run(*cluster_->dbus(), std::move(args));
        EXPECT_TRUE(r.ok()) << r.output;
    }

    // The client's notifications once it has `n` of them (or after 10 s), and after a
    // moment for any that should not come.
    static std::vector<fc::DeviceNotification> notifications(fc::PnfsClient& pnfs, std::size_t n) {
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (pnfs.device_notifications().size() < n && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(20ms);
        std::this_thread::sleep_for(300ms);
        return pnfs.device_notifications();
    }
};

} // namespace

TEST_F(DeviceNotify, GetdeviceinfoGrantsWhatTheClientAsksFor) {
    auto s = open_session();
    const fc::DeviceId4 dev = device_of(1);

    Grant g = getdeviceinfo(*s, dev, kChange | kDelete);
    ASSERT_EQ(g.status, static_cast<std::uint32_t>(NFS4_OK)) << fc::status_name(g.status);
    EXPECT_EQ(g.words, 1u);
    EXPECT_EQ(g.notifications, kChange | kDelete)
        << "granted " << fc::notify_types_name(g.notifications)
        << ": the Linux client caches a device only when it gets what it asked for";

    g = getdeviceinfo(*s, dev, 0);
    ASSERT_EQ(g.status, static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(g.notifications, 0u) << "nothing asked, nothing granted";
    EXPECT_EQ(g.words, 0u);

    g = getdeviceinfo(*s, dev, kDelete);
    EXPECT_EQ(g.notifications, kDelete) << fc::notify_types_name(g.notifications);

    // Bit 0 and bit 5 name no notify_deviceid_type4: never granted.
    g = getdeviceinfo(*s, dev, kChange | 1u | (1u << 5));
    EXPECT_EQ(g.notifications, kChange) << fc::notify_types_name(g.notifications);

    // A device the MDS does not know is not granted anything: it is not found.
    EXPECT_EQ(getdeviceinfo(*s, device_of(9), kChange | kDelete).status,
              static_cast<std::uint32_t>(NFS4ERR_NOENT));

    // The client library asks through PnfsOptions and records the answer.
    fc::PnfsOptions o;
    o.device_notify_types = kChange | kDelete;
    fc::PnfsClient pnfs(*s, o);
    EXPECT_EQ(pnfs.device(device_of(2)).notifications, kChange | kDelete);
}

TEST_F(DeviceNotify, DrainAndRemoveNotifyTheClientsGrantedIt) {
    auto granted_session = open_session();
    auto other_session = open_session();
    fc::PnfsOptions asks;
    asks.device_notify_types = kChange | kDelete;
    fc::PnfsClient granted(*granted_session, asks);
    fc::PnfsClient other(*other_session); // asks for nothing

    const fc::DeviceId4 dev1 = device_of(1), dev2 = device_of(2), dev3 = device_of(3);
    EXPECT_EQ(granted.device(dev2).notifications, kChange | kDelete);
    EXPECT_EQ(granted.device(dev3).notifications, kChange | kDelete);
    // The granted client asks for nothing about data server 1: nothing comes for it.
    EXPECT_EQ(getdeviceinfo(*granted_session, dev1, 0).notifications, 0u);
    EXPECT_EQ(other.device(dev2).notifications, 0u);
    EXPECT_EQ(other.device(dev3).notifications, 0u);
    const std::uint64_t asked_before = granted.getdeviceinfo_calls();

    cli({"drain", "1"});
    cli({"drain", "2"});
    cli({"remove", "3"});

    const auto got = notifications(granted, 2);
    ASSERT_EQ(got.size(), 2u) << "expected CHANGE of data server 2, DELETE of data server 3";
    EXPECT_EQ(got[0].type, static_cast<std::uint32_t>(NOTIFY_DEVICEID4_CHANGE))
        << got[0].describe();
    EXPECT_EQ(got[0].deviceid, dev2) << got[0].describe();
    EXPECT_EQ(got[0].layout_type, static_cast<std::uint32_t>(LAYOUT4_FLEX_FILES));
    EXPECT_FALSE(got[0].immediate) << "a drained device's address stays valid";
    EXPECT_EQ(got[1].type, static_cast<std::uint32_t>(NOTIFY_DEVICEID4_DELETE))
        << got[1].describe();
    EXPECT_EQ(got[1].deviceid, dev3) << got[1].describe();
    EXPECT_EQ(got[1].layout_type, static_cast<std::uint32_t>(LAYOUT4_FLEX_FILES));

    EXPECT_TRUE(other.device_notifications().empty())
        << "a client granted nothing is told nothing: "
        << other.device_notifications().front().describe();

    // The notified client dropped both devices: it asks again, and the removed one is gone.
    EXPECT_EQ(granted.device(dev2).notifications, kChange | kDelete);
    EXPECT_EQ(granted.getdeviceinfo_calls(), asked_before + 1);
    try {
        granted.device(dev3);
        ADD_FAILURE() << "GETDEVICEINFO of a removed data server's device succeeded";
    } catch (const fc::NfsError& e) {
        EXPECT_EQ(e.status(), static_cast<std::uint32_t>(NFS4ERR_NOENT)) << e.what();
    }

    // The back channel stays usable: undraining notifies again.
    cli({"undrain", "2"});
    const auto after = notifications(granted, 3);
    ASSERT_EQ(after.size(), 3u);
    EXPECT_EQ(after[2].type, static_cast<std::uint32_t>(NOTIFY_DEVICEID4_CHANGE));
    EXPECT_EQ(after[2].deviceid, dev2);

    EXPECT_TRUE(cluster_->mds().error_lines().empty())
        << ::testing::PrintToString(cluster_->mds().error_lines());
}
