include $(sort $(wildcard $(BR2_EXTERNAL_NASBOOT_PATH)/package/*/*.mk))
