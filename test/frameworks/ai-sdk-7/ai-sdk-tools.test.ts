/** test/ai-sdk/ai-sdk-tools.test.ts again, against AI SDK 7 (the suite's run of it is AI SDK 6's). */
import '../../ai-sdk/ai-sdk-tools.test.js';
