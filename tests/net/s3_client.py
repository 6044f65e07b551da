"""boto3 side of the S3 store tests: an independent client of the same server.

  s3_client.py upload DIR BUCKET PREFIX     upload every file below DIR
  s3_client.py download BUCKET PREFIX DIR   download every object below PREFIX
  s3_client.py keys BUCKET PREFIX           print the keys below PREFIX
Endpoint and credentials from AWS_ENDPOINT_URL / AWS_ACCESS_KEY_ID / ... ."""
import os
import sys

import boto3
from botocore.config import Config


def client():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1",
                        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))


def keys(s3, bucket, prefix):
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += [o["Key"] for o in page.get("Contents", [])]
    return out


def main():
    cmd, args, s3 = sys.argv[1], sys.argv[2:], client()
    if cmd == "upload":
        d, bucket, prefix = args
        for root, _, files in os.walk(d):
            for f in files:
                p = os.path.join(root, f)
                s3.upload_file(p, bucket, prefix + "/" + os.path.relpath(p, d))
    elif cmd == "download":
        bucket, prefix, d = args
        for k in keys(s3, bucket, prefix + "/"):
            p = os.path.join(d, k[len(prefix) + 1:])
            os.makedirs(os.path.dirname(p), exist_ok=True)
            s3.download_file(bucket, k, p)
    elif cmd == "keys":
        print("\n".join(keys(s3, *args)))


main()
