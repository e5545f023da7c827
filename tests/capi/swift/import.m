@import StepbackC;

int swift_ready(void);
int swift_ready(void) { return STEPBACK_C_API_VERSION + (int)sizeof(stepback_download); }
