/* tools/zcube.c — the zcube command (placeholder main until the commands land). */
#include <stdio.h>

#include "zcube.h"

int main(void)
{
    printf("zcube %s\n", zc_version_string());
    return 0;
}
