# The GPU check of round 18 (research/notes.md, "On a GPU"): on the lent machine, build
# llama-cpp-python with CUDA, then scripts/bench/bench_engine.py on random-weight GGUFs of the
# 1.5B and 7B shapes (the real files cannot travel: 64 MiB per call). What travels, in .gpu/
# (ignored, named in `carry`): the llama-cpp-python 0.3.36 sdist without vendor/llama.cpp's
# docs, benches, vocab GGUFs and .git (76.6 -> 12.6 MB); wheels of pydantic, pydantic-core,
# annotated-types, typing-inspection, typing-extensions, diskcache and gguf for cp312; a
# vocab-only GGUF (make_synthetic_gguf.py --vocab-only --tokenizer-from the 1.5B); the two dev
# files bench_engine.py reads (halueval_qa_dev.jsonl, uhgeval_dev.jsonl).
#   run(command="bash research/gpu_check.sh 2>&1", carry=[".gpu"], timeout_s=560)
set -u
export PYTHONUNBUFFERED=1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
nproc >> $OUT/gpu.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL=16
python3 -m pip install --no-index --no-deps --no-build-isolation --no-cache-dir --target /tmp/llama \
  .gpu/llama_cpp_python-0.3.36.tar.gz > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
echo "build_s $(( $(date +%s) - t0 ))" | tee -a $OUT/gpu.txt
echo "import llama_cpp" > /tmp/site/sitecustomize.py  # round 8: import llama_cpp before numpy/pydantic
export PYTHONPATH=/tmp/site:/tmp/llama:$PWD LOCALEVAL_MODELS_DIR=$PWD/models
# the 1.5B file's tokenizer has 152064 tokens, the shape's vocabulary 151936: pad the shape
sed 's/Shape(28, 1536, 8960, 12, 2, 151936)/Shape(28, 1536, 8960, 12, 2, 152064)/' \
  scripts/bench/make_synthetic_gguf.py > /tmp/msg.py
python3 /tmp/msg.py /tmp/m15.gguf --shape qwen2.5-1.5b --tokenizer-from .gpu/vocab.gguf | tee -a $OUT/gpu.txt
python3 scripts/bench/bench_engine.py --model /tmp/m15.gguf --data .gpu/data --samples 128 \
  --settings 1,8,32,rev8 --repeat 8 --ceiling 1,16,64 > $OUT/bench15.json 2> $OUT/bench15.err
echo "bench15 rc=$? at $(( $(date +%s) - t0 ))s" | tee -a $OUT/gpu.txt
python3 scripts/bench/bench_engine.py --model /tmp/m15.gguf --data .gpu/data --samples 64 --context-chars 3000 \
  --settings 1,16 --ceiling "" > $OUT/bench15long.json 2> $OUT/bench15long.err
echo "bench15long rc=$? at $(( $(date +%s) - t0 ))s" | tee -a $OUT/gpu.txt
python3 scripts/bench/make_synthetic_gguf.py /tmp/m7.gguf --shape qwen2.5-7b --tokenizer-from .gpu/vocab.gguf | tee -a $OUT/gpu.txt
python3 scripts/bench/bench_engine.py --model /tmp/m7.gguf --data .gpu/data --samples 128 \
  --settings 1,8,rev8 --ceiling 1,256 > $OUT/bench7.json 2> $OUT/bench7.err
echo "bench7 rc=$? at $(( $(date +%s) - t0 ))s" | tee -a $OUT/gpu.txt
grep -h '^setting' $OUT/*.err
