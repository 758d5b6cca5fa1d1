################################################################################
#
# nasboot
#
################################################################################

# Keep in step with Cargo.toml (tests/pkg/buildroot-tree.sh checks it).
NASBOOT_VERSION = 0.1.0
NASBOOT_SITE = $(BR2_EXTERNAL_NASBOOT_PATH)/..
NASBOOT_SITE_METHOD = local
NASBOOT_LICENSE = MIT or Apache-2.0
# Build products are not sources: do not copy them into the build dir.
NASBOOT_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = --exclude /target

NASBOOT_PROFILE = $(call qstrip,$(BR2_PACKAGE_NASBOOT_PROFILE))
NASBOOT_PROFILE_PATH = \
	$(if $(filter /%,$(NASBOOT_PROFILE)),$(NASBOOT_PROFILE),$(NASBOOT_SITE)/$(NASBOOT_PROFILE))

ifneq ($(NASBOOT_PROFILE),)
define NASBOOT_INSTALL_PROFILE
	$(INSTALL) -D -m 0644 $(NASBOOT_PROFILE_PATH) \
		$(TARGET_DIR)/etc/nasboot.toml
endef
NASBOOT_POST_INSTALL_TARGET_HOOKS += NASBOOT_INSTALL_PROFILE
endif

define NASBOOT_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(NASBOOT_PKGDIR)/S35nasboot \
		$(TARGET_DIR)/etc/init.d/S35nasboot
endef

define NASBOOT_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(NASBOOT_SITE)/board/init/systemd/nasboot.service \
		$(TARGET_DIR)/usr/lib/systemd/system/nasboot.service
	$(INSTALL) -D -m 0644 $(NASBOOT_SITE)/board/init/systemd/nasboot-fallback.service \
		$(TARGET_DIR)/usr/lib/systemd/system/nasboot-fallback.service
endef

# With udev (eudev or systemd's), each network device added after boot
# re-applies the firewall, so that hook = "auto" judges the new set of
# devices (board/init/udev/60-nasboot.rules).
ifeq ($(BR2_PACKAGE_HAS_UDEV),y)
define NASBOOT_INSTALL_UDEV_RULES
	$(INSTALL) -D -m 0644 $(NASBOOT_SITE)/board/init/udev/60-nasboot.rules \
		$(TARGET_DIR)/usr/lib/udev/rules.d/60-nasboot.rules
endef
NASBOOT_POST_INSTALL_TARGET_HOOKS += NASBOOT_INSTALL_UDEV_RULES
endif

ifeq ($(BR2_PACKAGE_NASBOOT_FROM_SOURCE),y)

# The project's size settings win over Buildroot's generic ones: the
# boards are small.
NASBOOT_CARGO_ENV = \
	CARGO_PROFILE_RELEASE_OPT_LEVEL=z \
	CARGO_PROFILE_RELEASE_LTO=true \
	CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
	CARGO_PROFILE_RELEASE_PANIC=abort

# cargo-package vendors the crates at download time, which the local
# site method skips: vendor them into the build dir before building. The
# tree's own .cargo/config.toml (cross linkers, static glibc, qemu
# runners for scripts/build) is replaced: Buildroot's toolchain and C
# library are used instead.
define NASBOOT_VENDOR_CRATES
	if [ ! -d $(@D)/VENDOR ]; then \
		mkdir -p $(@D)/.cargo && \
		cd $(@D) && \
		$(TARGET_MAKE_ENV) $(PKG_COMMON_CARGO_ENV) \
			cargo vendor --locked VENDOR > $(@D)/.cargo/config.toml; \
	fi
endef
NASBOOT_PRE_BUILD_HOOKS += NASBOOT_VENDOR_CRATES

# cargo install puts the binary in /usr/bin; the init scripts expect it
# in /usr/sbin.
define NASBOOT_MOVE_TO_SBIN
	mkdir -p $(TARGET_DIR)/usr/sbin
	mv $(TARGET_DIR)/usr/bin/nasboot $(TARGET_DIR)/usr/sbin/nasboot
endef
NASBOOT_POST_INSTALL_TARGET_HOOKS += NASBOOT_MOVE_TO_SBIN

$(eval $(cargo-package))

else

NASBOOT_TRIPLE = $(call qstrip,$(BR2_PACKAGE_NASBOOT_PREBUILT_TRIPLE))
NASBOOT_PREBUILT_BIN = $(NASBOOT_SITE)/target/dist/nasboot-$(NASBOOT_TRIPLE)

define NASBOOT_INSTALL_TARGET_CMDS
	@test -f $(NASBOOT_PREBUILT_BIN) || { \
		echo "nasboot: $(NASBOOT_PREBUILT_BIN) is missing:" \
			"run scripts/build $(NASBOOT_TRIPLE) in the nasboot tree" >&2; \
		exit 1; }
	$(INSTALL) -D -m 0755 $(NASBOOT_PREBUILT_BIN) \
		$(TARGET_DIR)/usr/sbin/nasboot
endef

$(eval $(generic-package))

endif
