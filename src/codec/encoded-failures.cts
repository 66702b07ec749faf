/**
 * The failure converter of encryption: failure messages and stack traces move into an encoded
 * payload (which the codec encrypts) and the stored message reads `Encoded failure`. CommonJS, for
 * Temporal loads failure converters with `require` from `DataConverter.failureConverterPath`.
 */
import common = require('@temporalio/common');

export = { failureConverter: new common.DefaultFailureConverter({ encodeCommonAttributes: true }) };
