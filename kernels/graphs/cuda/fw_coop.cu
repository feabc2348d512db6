// V4 and V5 with the cooperative-groups grid barrier (grid.sync()) beside the paper's flag array:
// fw_paper002.cu compiled again with FW_COOP (launched with cudaLaunchCooperativeKernel).
#define FW_COOP 1
#include "fw_paper002.cu"
