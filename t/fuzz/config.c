/* config: the configuration file's text. */
#include "config/config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct purser_config cfg;
    struct purser_error err;
    config_load_text(&cfg, (const char *)data, size, &err); /* (defaults first, its own) */
    config_release(&cfg);
    return 0;
}
