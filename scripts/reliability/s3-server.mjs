// The run's S3 service, a process of its own: s3rver on a loopback port with one bucket, except
// that a HEAD on the bucket (HeadBucket, each gateway's start-up check) answers as S3 does: the
// bucket exists and the request's signature holds, nothing listed. s3rver serves HEAD with its
// GET handler, which lists up to 1,000 objects by a synchronous walk of the whole bucket folder
// and reads each one's metadata: with the run's thousands of stored files one start-up check took
// seconds of s3rver's single thread, and every other instance's reads and writes waited behind it.
//
//   node scripts/reliability/s3-server.mjs <directory> <port> <bucket>
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const S3rver = require("s3rver");
const bucketActions = require("s3rver/lib/controllers/bucket.js");

const listObjects = bucketActions.getBucket;
// The route runs the signature check and the bucket's existence check before this.
bucketActions.getBucket = async function getBucket(ctx) {
  if (ctx.method === "HEAD") {
    ctx.body = "";
    return;
  }
  return listObjects(ctx);
};

const [directory, port, bucket] = process.argv.slice(2);
const server = new S3rver({
  directory,
  address: "127.0.0.1",
  port: Number(port),
  silent: true,
  configureBuckets: [{ name: bucket, configs: [] }],
});
await server.run();
process.stdout.write(`s3 listening on 127.0.0.1:${port}\n`);
