// The run's S3 service, a process of its own: s3rver on a loopback port with one bucket, with two
// of its answers made to cost what they cost on S3, since s3rver's one thread serves every
// instance and a slow answer holds up all the others:
// - a HEAD on the bucket (HeadBucket, each gateway's start-up check) answers from the bucket's
//   existence and the request's signature. s3rver serves HEAD with its GET handler, which lists
//   up to 1,000 objects by a synchronous walk of the whole bucket folder and reads each one's
//   metadata: with the run's thousands of stored files one check took seconds;
// - a DELETE of an object removes its files only. s3rver then reads the whole folder the object
//   was in, synchronously, to remove it when empty: a folder of thousands of files per delete.
//
//   node scripts/reliability/s3-server.mjs <directory> <port> <bucket>
import { unlink } from "node:fs/promises";
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

const FilesystemStore = require("s3rver/lib/stores/filesystem.js");
FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
  const files = ["object", "object.md5", "metadata.json"].map((kind) => this.getResourcePath(bucket, key, kind));
  await Promise.all(
    files.map((file) =>
      unlink(file).catch((err) => {
        if (err.code !== "ENOENT") throw err;
      }),
    ),
  );
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
